// fetchHealth (client_js/channel.js) against real local HTTP servers, run with `node --test`.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { WORKER_ADDRESS_ADVICE, fetchHealth, redactToken, socketRefusedAdvice, socketUrl, workerBase } from "../../client_js/channel.js";

function listen(handler) {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const baseOf = (server) => new URL(`http://127.0.0.1:${server.address().port}/`);

// Without the timeout, fetchHealth would wait on this server forever (and the node test time out).
test("a worker that accepts but never answers is down after the timeout", { timeout: 10000 }, async () => {
  const server = await listen(() => {}); // never responds
  try {
    const health = await fetchHealth(baseOf(server), { timeoutMs: 200, pageOrigin: "http://127.0.0.1:1" });
    assert.equal(health.state, "down");
    assert.match(health.message, /did not answer \/health within 0.2 s/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("the answer is classified: ready, booting, refused", async () => {
  let status = 200;
  let failed = false;
  const server = await listen((request, response) => {
    response.writeHead(status, { "Content-Type": "application/json" });
    const body = status === 200 ? { status: "ok", loaded: true } : { error: "Loading: wait" };
    response.end(JSON.stringify(failed ? { ...body, status: "fail", loaded: true } : body));
  });
  try {
    const ask = () => fetchHealth(baseOf(server), { pageOrigin: baseOf(server).origin });
    assert.equal((await ask()).state, "ready");
    status = 503;
    assert.equal((await ask()).state, "booting");
    failed = true; // a loaded worker whose Redis is gone: 503 with `status: fail`
    assert.deepEqual([(await ask()).state, (await ask()).message], ["error", "the worker cannot take requests: Loading: wait"]);
    failed = false;
    status = 403;
    assert.match((await ask()).message, /refused this page: Loading: wait/);
  } finally {
    server.close();
  }
});

test("a body with mistyped fields is an error naming the field", async () => {
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ status: "ok", loaded: true, sample_rate: "fast" }));
  });
  try {
    const health = await fetchHealth(baseOf(server), { pageOrigin: baseOf(server).origin });
    assert.equal(health.state, "error");
    assert.match(health.message, /cannot read: sample_rate must be an integer sample rate/);
  } finally {
    server.close();
  }
});

test("nothing listening: down, naming the origin rule when the page is elsewhere", async () => {
  const server = await listen(() => {});
  const base = baseOf(server);
  server.close();
  const health = await fetchHealth(base, { pageOrigin: "http://localhost:5173" });
  assert.equal(health.state, "down");
  assert.match(health.message, /does not allow this page's origin \(http:\/\/localhost:5173; start it with --allowed-origins/);
});

test("redactToken hides every token value and keeps the rest of the text", () => {
  assert.equal(
    redactToken("refused the WebSocket at ws://h:1/ws?token=s3cr%20et&x=1 (or ws://h/ws?a=b&token=two#f)"),
    "refused the WebSocket at ws://h:1/ws?token=***&x=1 (or ws://h/ws?a=b&token=***#f)",
  );
  assert.equal(redactToken("no secret here: tokens=1"), "no secret here: tokens=1");
});

// The page shows every message through redactToken: the advice said "(?token=…). Start the worker with
// --allowed-origins.", and the masking left "(?token=*** Start the worker with --allowed-origins.".
test("the advice for a refused WebSocket reads whole once redacted, and names the token a page holds", () => {
  for (const holdsToken of [false, true]) {
    const advice = socketRefusedAdvice("http://10.0.0.5:7768", holdsToken);
    assert.equal(redactToken(advice), advice);
    assert.match(advice, /origin \(http:\/\/10\.0\.0\.5:7768\) is not allowed: start the worker with --allowed-origins/);
    assert.match(advice, /open the page with \?token= followed by/);
    assert.equal(advice.includes("the token this page holds is not the worker's"), holdsToken);
  }
  assert.equal(redactToken("open it with ?token= followed by it"), "open it with ?token= followed by it");
});

test("a ?worker= without http:// is an error that says so, not a throw", async () => {
  for (const worker of ["localhost:7768", "javascript:alert(1)", "ftp://127.0.0.1/"]) {
    const health = await fetchHealth(new URL(worker, "http://127.0.0.1:7768/"), { pageOrigin: "http://127.0.0.1:7768" });
    assert.equal(health.state, "error");
    assert.match(health.message, /\?worker= must be an http:\/\/ or https:\/\/ address/);
  }
});

test("a /health whose body stalls after its headers is down after the timeout", { timeout: 10000 }, async () => {
  const server = await listen((request, response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    response.write('{"status": "ok", '); // and nothing more
  });
  try {
    const health = await fetchHealth(baseOf(server), { timeoutMs: 300, pageOrigin: baseOf(server).origin });
    assert.equal(health.state, "down");
    assert.match(health.message, /did not answer \/health within 0.3 s/);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("?worker= with a path and no trailing slash keeps its last segment", () => {
  // A worker behind a reverse proxy at /tts: "health" resolved against ".../tts" named ".../health".
  const page = (search) => ({ search, href: `http://127.0.0.1:7768/index.html${search}` });
  for (const worker of ["https://lab.example/tts", "https://lab.example/tts/"]) {
    const base = workerBase(page(`?worker=${encodeURIComponent(worker)}`));
    assert.equal(new URL("health", base).href, "https://lab.example/tts/health");
    assert.equal(socketUrl(base, "t"), "wss://lab.example/tts/ws?token=t");
  }
  assert.equal(workerBase(page("?worker=http://10.0.0.5:7768")).href, "http://10.0.0.5:7768/");
  assert.equal(workerBase(page("")).href, "http://127.0.0.1:7768/"); // the page's own worker
});

test("a /health answer that is not JSON (a proxy's error page) says so and names the address", async () => {
  let status = 502;
  const server = await listen((request, response) => {
    response.writeHead(status, { "Content-Type": "text/html" });
    response.end("<html><body>Bad Gateway</body></html>");
  });
  try {
    const health = await fetchHealth(baseOf(server), { pageOrigin: baseOf(server).origin });
    assert.equal(health.state, "error");
    // It read "GET /health answered 502: " and stopped there.
    assert.equal(health.message, `GET ${baseOf(server).href}health answered 502 with a body that is not JSON: is an npu-worker there?`);
    status = 503; // the proxy's "Service Unavailable" page: not a worker loading its model
    assert.equal((await fetchHealth(baseOf(server), { pageOrigin: baseOf(server).origin })).state, "error");
  } finally {
    server.close();
  }
});

test("a proxy's 401 or 403 page to /health says the refusal first, not 'is an npu-worker there?'", async () => {
  let status = 401;
  const server = await listen((request, response) => {
    response.writeHead(status, { "Content-Type": "text/html" });
    response.end("<html><body>Authorization Required</body></html>");
  });
  try {
    for (status of [401, 403]) {
      const health = await fetchHealth(baseOf(server), { pageOrigin: baseOf(server).origin });
      assert.equal(health.state, "refused");
      assert.equal(
        health.message,
        `GET ${baseOf(server).href}health answered ${status}: this page was refused, not by the worker (its answer is not JSON): a proxy in front of it?`,
      );
    }
  } finally {
    server.close();
  }
});

test("a 4xx to /health: a path of the worker is told what ?worker= takes; a proxy's 429 or 408 is not", async () => {
  let status = 404;
  const server = await listen((request, response) => {
    response.writeHead(status, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ error: { message: "slow down", code: "RateLimited" } }));
  });
  try {
    const base = baseOf(server);
    const ask = () => fetchHealth(base, { pageOrigin: base.origin });
    assert.equal((await ask()).message, `GET ${base.href}health answered 404: RateLimited: slow down: ${WORKER_ADDRESS_ADVICE}`);
    for (status of [429, 408]) {
      const health = await ask();  // it read "?worker= takes the address …": the address was right
      assert.deepEqual([health.state, health.message], ["error", `GET ${base.href}health answered ${status}: RateLimited: slow down: polling goes on`]);
    }
  } finally {
    server.close();
  }
});
