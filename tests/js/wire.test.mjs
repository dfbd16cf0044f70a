// client_js/wire.js: the page's type checks on what a worker sends, run with `node --test`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { eventProblem, healthProblem } from "../../client_js/wire.js";

test("the worker's own events pass", () => {
  const good = [
    { event: "start", total: 39, backend: "espeak-ng", device: "cpu", job_id: "df2e", sample_rate: 24000, seq: 1 },
    { event: "progress", idx: 0, status: "synth" },
    { event: "progress", idx: 0, status: "ok", elapsed_sec: 0.02, duration_sec: 1.5, cached: false },
    { event: "audio_start", idx: 0, sample_rate: 24000, format: "pcm_s16le", channels: 1 },
    { event: "audio_end", idx: 0, samples: 36000, chunks: 3 },
    { event: "first_audio", ttfa_ms: 21.5 },
    { event: "error", idx: null, error: "Busy: one request at a time" },
    { event: "done", ok_count: 1, fail_count: 0, elapsed_total_sec: 0.1, cancelled: false },
    { event: "heartbeat" },
    { event: "something_new", extra: { any: "thing" } },
  ];
  for (const event of good) assert.equal(eventProblem(event), null, JSON.stringify(event));
});

test("a mistyped or missing field names itself", () => {
  assert.match(eventProblem({ event: "audio_start", idx: 0, sample_rate: "24000" }), /^sample_rate must be an integer sample rate/);
  assert.match(eventProblem({ event: "audio_start", idx: 0, sample_rate: 1e9 }), /^sample_rate must be/);
  assert.match(eventProblem({ event: "audio_end", idx: 0, samples: -1 }), /^samples must be a non-negative integer, not -1/);
  assert.match(eventProblem({ event: "audio_end", idx: 1.5, samples: 3 }), /^idx must be/);
  assert.match(eventProblem({ event: "progress", status: "ok" }), /a progress event without idx/);
  assert.match(eventProblem({ event: "error", error: { code: 1 } }), /^error must be a string/);
  assert.match(eventProblem({ event: "done", cancelled: "no" }), /^cancelled must be true or false/);
  assert.match(eventProblem({ event: "first_audio", ttfa_ms: "fast" }), /^ttfa_ms must be a non-negative number/);
  assert.match(eventProblem({ event: 7 }), /without an `event` kind/);
});

test("a health body with a mistyped field is refused, a real one passes", () => {
  const real = {
    status: "ok", loaded: true, load_seconds: 0.004, backend: "espeak-ng", device: "cpu", ref_wav: null,
    version: "v1.0", sample_rate: 24000, placement: {}, queue: 0, jobs_running: 0,
    voices: ["/srv/a.wav", { name: "b", ref_wav: "/srv/b.wav" }], speed_range: [0.5, 2],
  };
  assert.equal(healthProblem(real), null);
  assert.equal(healthProblem({ status: "loading", loaded: false, sample_rate: null }), null);
  assert.match(healthProblem({ ...real, ref_wav: 5 }), /^ref_wav must be a string, not 5/);
  assert.match(healthProblem({ ...real, voices: "all" }), /voices must be a list/);
  assert.match(healthProblem({ ...real, voices: [{ name: "x" }] }), /ref_wav must be a string/);
  assert.match(healthProblem({ ...real, speed_range: [2, 0.5] }), /speed_range must be two positive numbers/);
  assert.match(healthProblem({ ...real, jobs_running: "3" }), /^jobs_running must be/);
  // The pill draws it with toFixed: a string threw there and ended the /health polling for good.
  assert.match(healthProblem({ ...real, load_seconds: "4" }), /^load_seconds must be a non-negative number/);
  assert.match(healthProblem([1]), /not a JSON object/);
});
