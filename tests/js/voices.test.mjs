// client_js/voices.js: the stored voices the page offers, against real local HTTP servers, with `node --test`.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { NO_STORED_VOICES, fetchVoices, offeredVoices, shownVoices, storedVoices, voicesNote } from "../../client_js/voices.js";

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

const LIST = {
  object: "list",
  voices: ["default", "teacher", "narrator", "ko"],
  data: [
    { name: "default", source: "default", ref_text: null },
    { name: "teacher", source: "uploaded", ref_text: "안녕하세요", duration_sec: 2.0, sample_rate: 16000 },
    { name: "narrator", source: "directory", ref_text: "hello", duration_sec: 3.25, sample_rate: 24000 },
    { name: "ko", source: "espeak", description: "Korean" },
  ],
};

test("uploads and directory voices are offered; default and the engine's languages are not", () => {
  const listed = storedVoices(LIST);
  assert.deepEqual(listed.voices.map((v) => v.name), ["teacher", "narrator"]);
  assert.equal(listed.voices[0].label, "teacher (2.0 s)");
  assert.equal(listed.voices[0].title, "안녕하세요");
  assert.equal(listed.problem, null);
  assert.equal(voicesNote(listed), "");
});

test("an espeak-ng worker, which uses no reference audio, is offered no stored voice, and the note says why", () => {
  const listed = storedVoices(LIST);
  const none = offeredVoices({ backend: "espeak-ng" }, listed, "", "teacher");
  assert.deepEqual(none.voices, []);
  assert.equal(voicesNote(none), NO_STORED_VOICES);
  const zipvoice = offeredVoices({ backend: "zipvoice-onnx" }, listed, "", "");
  assert.deepEqual(zipvoice.voices.map((v) => v.name), ["teacher", "narrator"]);
});

test("a name that breaks the voice name rule is never offered, and is counted", () => {
  const hostile = [
    "<img src=x onerror=alert(1)>",
    "../../etc/passwd",
    "a".repeat(65),
    "x".repeat(100000),
    "",
    42,
    null,
    "-starts-with-a-dash",
    "a..b", // the worker's rule refuses ".." anywhere: it was offered
  ];
  const body = { data: [...hostile.map((name) => ({ name, source: "uploaded" })), { name: "ok.voice_1-a", source: "uploaded" }] };
  const listed = storedVoices(body);
  assert.deepEqual(listed.voices.map((v) => v.name), ["ok.voice_1-a"]);
  assert.equal(listed.skipped, hostile.length);
  assert.match(voicesNote(listed), /^9 voices with a name that is no voice name not offered$/);
  assert.equal(storedVoices({ data: [{ name: "a".repeat(64), source: "uploaded" }] }).voices.length, 1);
});

test("thousands of voices: at most the bound are offered and the note says how many exist", () => {
  const data = Array.from({ length: 5000 }, (_, i) => ({ name: `voice${i}`, source: "uploaded", duration_sec: 1 }));
  const listed = storedVoices({ data }, 500);
  assert.equal(listed.voices.length, 500);
  assert.equal(listed.total, 5000);
  assert.equal(voicesNote(listed), "showing 500 of 5000 stored voices (type in the filter box to find the others)");
});

test("the filter box finds any stored voice, past the bound too, and keeps the one chosen", () => {
  const data = Array.from({ length: 5000 }, (_, i) => ({ name: `voice${i}`, source: "uploaded" }));
  const listed = storedVoices({ data }, 500);
  const found = shownVoices(listed, " VOICE4999 ");
  assert.deepEqual(found.voices.map((voice) => voice.name), ["voice4999"]);
  assert.equal(voicesNote(found), '1 stored voice matching "voice4999"');
  const many = shownVoices(listed, "voice1", "voice4999");
  assert.equal(many.voices[0].name, "voice4999");  // the voice chosen stays offered
  assert.equal(many.voices.length, 501);
  assert.equal(voicesNote(many), `${many.total} stored voices matching "voice1", showing 501`);
  assert.equal(voicesNote(shownVoices(listed, "nobody")), '0 stored voices matching "nobody"');
  assert.equal(shownVoices(listed, "", "gone").voices.length, 500);  // a chosen voice not stored is not made up
});

test("entries of the wrong shape are passed over, a body without data is a problem", () => {
  const listed = storedVoices({ data: [null, 5, "teacher", [], { source: "uploaded" }, { name: "t", source: "uploaded", duration_sec: "long", ref_text: 7 }] });
  assert.deepEqual(listed.voices, [{ name: "t", label: "t", title: "" }]);
  assert.match(storedVoices({ voices: ["a"] }).problem, /no `data` list: only the worker's default voice is offered/);
  assert.match(storedVoices(null).problem, /no `data` list/);
  assert.equal(voicesNote(storedVoices({ data: [] })), "no stored voices yet (upload one with POST /v1/audio/voices)");
});

test("the token goes as a bearer header, never in the address", async () => {
  const seen = [];
  const server = await listen((request, response) => {
    seen.push({ url: request.url, authorization: request.headers.authorization });
    response.writeHead(200, { "Content-Type": "application/json" });
    response.end(JSON.stringify(LIST));
  });
  await closing(server, async () => {
    const listed = await fetchVoices(baseOf(server), "s3cret");
    assert.deepEqual(listed.voices.map((v) => v.name), ["teacher", "narrator"]);
    await fetchVoices(baseOf(server), "");
    assert.deepEqual(seen, [
      { url: "/v1/audio/voices", authorization: "Bearer s3cret" },
      { url: "/v1/audio/voices", authorization: undefined },
    ]);
  });
});

test("a list that cannot be had says why, and that the default is still offered", async () => {
  let status = 401;
  let body = JSON.stringify({ error: { message: "Unauthorized: a token is required", code: "Unauthorized" } });
  const server = await listen((request, response) => {
    response.writeHead(status, { "Content-Type": "application/json" });
    response.end(body);
  });
  await closing(server, async () => {
    const ask = () => fetchVoices(baseOf(server), "");
    assert.equal((await ask()).problem,
      "the worker wants a token for its voice list (open the page with ?token= followed by it): only the worker's default voice is offered");
    status = 404;
    assert.match((await ask()).problem, /^this worker has no voice list \(GET \/v1\/audio\/voices answered 404\)/);
    status = 500;
    body = JSON.stringify({ error: { message: "EngineError: espeak failed" } });
    assert.equal((await ask()).problem, "GET /v1/audio/voices answered 500: EngineError: espeak failed; only the worker's default voice is offered");
    status = 200;
    body = "<html>proxy</html>";
    assert.match((await ask()).problem, /body that is not JSON: only the worker's default voice is offered/);
  });
});

test("a worker that is not there, or never answers, is a problem, not a throw", { timeout: 10000 }, async () => {
  const server = await listen(() => {}); // never responds
  const base = baseOf(server);
  await closing(server, async () => {
    const silent = await fetchVoices(base, "", { timeoutMs: 200 });
    assert.match(silent.problem, /^cannot fetch the voice list from http:\/\/127\.0\.0\.1:\d+ \(no answer within 0.2 s\)/);
  });
  const gone = await fetchVoices(base, ""); // closed: nothing listens there now
  assert.match(gone.problem, /^cannot fetch the voice list from .* \(the request failed\): only the worker's default voice is offered$/);
});

test("a list whose head comes and whose body never ends is said so, not as a body that is no JSON", { timeout: 10000 }, async () => {
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    response.write('{"data": ['); // and no more
  });
  await closing(server, async () => {
    const stalled = await fetchVoices(baseOf(server), "", { timeoutMs: 300 });
    assert.match(stalled.problem, /^cannot fetch the voice list from .* \(its body did not arrive within 0.3 s\): only the worker's default voice is offered$/);
  });
});
