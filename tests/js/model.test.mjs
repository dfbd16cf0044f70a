// The player's state model (client_js/model.js): pure functions, run with `node --test`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FRESH_SECTION, cancelRun, figures, newRun, settle } from "../../client_js/model.js";

test("a new run counts its sections and is running", () => {
  const run = newRun([{}, {}, {}]);
  assert.equal(run.total, 3);
  assert.equal(run.running, true);
  assert.equal(run.ttfaMs, null);
});

test("a section is done only when synthesised and played", () => {
  const s = { ...FRESH_SECTION, state: "synthesising" };
  s.synthesised = true;
  settle(s);
  assert.equal(s.state, "ready");
  s.played = true;
  settle(s);
  assert.equal(s.state, "done");
  const failed = { ...FRESH_SECTION, state: "failed", synthesised: true, played: true };
  settle(failed);
  assert.equal(failed.state, "failed"); // a failure is never overwritten
  const playing = { ...FRESH_SECTION, state: "playing", synthesised: true };
  settle(playing);
  assert.equal(playing.state, "playing");
});

test("figures before any request", () => {
  const f = figures({ run: null, sections: [], player: null, playerStatus: null });
  assert.equal(f.summary, "No request yet.");
  assert.equal(f.bufferedMs, 0);
  assert.equal(f.contextRate, 0);
});

test("figures of a running and of a finished request", () => {
  const player = { sampleRate: 24000, context: { currentTime: 1.5, outputLatency: 0.02, baseLatency: 0.01 } };
  const run = { ...newRun([{}, {}]), ttfaMs: 180, streamRate: 24000, receivedSamples: 48000 };
  const sections = [{ synthesised: true }, { synthesised: false }];
  const status = { bufferedFrames: 12000, underruns: 1, starvedFrames: 2400, playedFrames: 36000, playedSourceSamples: 36000 };
  let f = figures({ run, sections, player, playerStatus: status });
  assert.equal(f.summary, "Running: 1 of 2 synthesised. Longest page task: none over 50 ms.");
  assert.equal(f.bufferedMs, 500);
  assert.equal(f.starvedMs, 100);
  assert.equal(f.outputLatencyMs, 20);
  assert.equal(f.ttfaMs, 180);
  Object.assign(run, { running: false, okCount: 2, failCount: 0, elapsedTotalSec: 1.234, longestTaskMs: 61.6 });
  f = figures({ run, sections, player, playerStatus: status });
  assert.equal(f.summary, "Finished: 2 ok, 0 failed in 1.23 s of synthesis. Longest page task: 62 ms.");
});

test("cancelRun cancels every unfinished section and the run, and the summary says so", () => {
  const sections = ["done", "playing", "ready", "synthesising", "queued", "failed"].map((state) => ({
    ...FRESH_SECTION, state, synthesised: ["done", "playing", "ready"].includes(state),
  }));
  const run = newRun(sections);
  cancelRun(run, sections);
  assert.deepEqual(sections.map((s) => s.state), ["done", "cancelled", "cancelled", "cancelled", "cancelled", "failed"]);
  assert.equal(run.running, false);
  assert.equal(run.cancelled, true);
  // No `done` came from the worker: the counts are the rows' own (3 synthesised, 1 failed).
  const f = figures({ run, sections, player: null, playerStatus: null });
  assert.match(f.summary, /^Cancelled: 1 of 6 played, 1 failed, 4 cancelled; 3 synthesised\. /);
});

test("without the worker's done, the summary counts the rows (the socket closed mid-request)", () => {
  const sections = [
    { ...FRESH_SECTION, state: "done", synthesised: true, played: true },
    { ...FRESH_SECTION, state: "failed", error: "connection closed" },
    { ...FRESH_SECTION, state: "failed", error: "connection closed" },
  ];
  const run = { ...newRun(sections), running: false };
  assert.match(figures({ run, sections, player: null, playerStatus: null }).summary, /^Finished: 1 ok, 2 failed\./);
});

test("a cancelled run's summary adds up to its rows, with the worker's synthesis time when its done came", () => {
  const sections = [
    { ...FRESH_SECTION, state: "done", synthesised: true, played: true },
    { ...FRESH_SECTION, state: "cancelled", synthesised: true },
    { ...FRESH_SECTION, state: "cancelled" },
  ];
  const run = { ...newRun(sections), running: false, cancelled: true, okCount: 2, failCount: 0, elapsedTotalSec: 0.5 };
  assert.match(figures({ run, sections, player: null, playerStatus: null }).summary,
    /^Cancelled: 1 of 3 played, 0 failed, 2 cancelled; 2 synthesised in 0\.50 s of synthesis\. /);
});

test("once the run has ended, its summary counts its own rows, not those of a text edited since", () => {
  const sections = [
    { ...FRESH_SECTION, state: "done", synthesised: true, played: true },
    { ...FRESH_SECTION, state: "cancelled" },
    { ...FRESH_SECTION, state: "cancelled" },
  ];
  const run = { ...newRun(sections), running: false, cancelled: true };
  // the text edited after the cancel: the list shows five new rows, not sent (it read "0 of 3 played, 0 cancelled")
  const edited = Array.from({ length: 5 }, () => ({ ...FRESH_SECTION, state: "idle" }));
  assert.match(figures({ run, sections: edited, player: null, playerStatus: null }).summary,
    /^Cancelled: 1 of 3 played, 0 failed, 2 cancelled; 1 synthesised\. /);
  const finished = { ...newRun(sections.slice(0, 1)), running: false };
  assert.match(figures({ run: finished, sections: edited, player: null, playerStatus: null }).summary, /^Finished: 1 ok, 0 failed\./);
});
