// client_js/bounded_json.js through fetchHealth and fetchVoices: a hostile ?worker= server's huge or
// endless JSON body is read up to a bound, then refused with a line saying so (real local HTTP servers).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

import { MAX_HEALTH_BYTES, readJson } from "../../client_js/bounded_json.js";
import { fetchHealth } from "../../client_js/channel.js";
import { fetchVoices } from "../../client_js/voices.js";

function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const baseOf = (server) => new URL(`http://127.0.0.1:${server.address().port}/`);

async function closing(server, body) {
  try {
    return await body();
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** A server that sends `{"pad": "xxxx…` without end (no Content-Length) and counts what it wrote. */
async function endlessJson() {
  const sent = { bytes: 0 };
  const chunk = "x".repeat(64 * 1024);
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    response.write('{"pad": "');
    const more = () => {
      while (!response.destroyed && sent.bytes < 1024 * 1024 * 1024) {
        sent.bytes += chunk.length;
        if (!response.write(chunk)) return response.once("drain", more);
      }
    };
    response.on("close", () => { sent.closed = true; });
    more();
  });
  return { server, sent };
}

test("an endless /health body is an error that says its bound, and is not read past it", { timeout: 20000 }, async () => {
  const { server, sent } = await endlessJson();
  await closing(server, async () => {
    const health = await fetchHealth(baseOf(server), { timeoutMs: 10000, pageOrigin: baseOf(server).origin });
    assert.equal(health.state, "error");
    assert.match(health.message, /answered 200, and its body is over 1 MiB: is an npu-worker there\?$/);
    assert.ok(sent.bytes < 64 * MAX_HEALTH_BYTES, `${sent.bytes} bytes sent`); // not the 1 GiB it would send
  });
});

test("a voice list over its bound offers the default only and says why", { timeout: 20000 }, async () => {
  const { server, sent } = await endlessJson();
  await closing(server, async () => {
    const listed = await fetchVoices(baseOf(server), "", { timeoutMs: 10000, maxBytes: 2 * 1024 * 1024 });
    assert.deepEqual(listed.voices, []);
    assert.equal(
      listed.problem,
      "GET /v1/audio/voices answered 200, and its body is over 2 MiB: only the worker's default voice is offered",
    );
    assert.ok(sent.bytes < 128 * 1024 * 1024, `${sent.bytes} bytes sent`);
  });
});

test("a stated Content-Length over the bound is refused before the body is read", async () => {
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(MAX_HEALTH_BYTES + 1) });
    response.write("{");  // the rest never comes: a read would wait for it
  });
  await closing(server, async () => {
    const health = await fetchHealth(baseOf(server), { timeoutMs: 5000, pageOrigin: baseOf(server).origin });
    assert.equal(health.state, "error");
    assert.match(health.message, /its body is over 1 MiB/);
  });
});

test("a small gzip body that inflates past the bound is refused (the decoded bytes are counted)", async () => {
  const bomb = gzipSync(Buffer.from(`{"pad": "${"x".repeat(4 * MAX_HEALTH_BYTES)}"}`));
  assert.ok(bomb.length < MAX_HEALTH_BYTES / 64);
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": bomb.length });
    response.end(bomb);
  });
  await closing(server, async () => {
    const health = await fetchHealth(baseOf(server), { pageOrigin: baseOf(server).origin });
    assert.equal(health.state, "error");
    assert.match(health.message, /its body is over 1 MiB/);
  });
});

test("a body within the bound is read whole, at the bound exactly too; one that is no JSON is null", async () => {
  const exact = `{"pad": "${"y".repeat(100 - 11)}"}`;
  assert.equal(exact.length, 100);
  const bodies = { "/exact": exact, "/over": exact + " ", "/nojson": "<html>" };
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    response.end(bodies[request.url]);
  });
  await closing(server, async () => {
    const read = async (path) => readJson(await fetch(new URL(path, baseOf(server))), 100);
    assert.equal((await read("/exact")).pad.length, 89);
    await assert.rejects(read("/over"), { name: "BodyTooLarge", message: "its body is over 100 bytes" });
    assert.equal(await read("/nojson"), null);
  });
});
