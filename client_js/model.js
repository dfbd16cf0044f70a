/**
 * The page's state model: one request (`run`), its sections, and the figures derived from them and
 * from the worklet's last report. Pure functions over plain objects: no DOM, no I/O.
 */

export function newRun(sections) {
  return {
    request: null, // the socket worker's number for it (set by `sent`)
    sentAt: null,
    running: true, // until `done` (or a refusal, or the socket closing)
    started: false, // `start` came
    audioDrained: false, // the worklet played the request's last sample
    cancelled: false,
    refused: null, // the worker's error when it refused the request before it started (nothing ran)
    error: null, // the worker's request-level error after it started (it ended the request)
    total: sections.length,
    sections, // its own rows: an edit of the text once it has ended puts others in the list
    ttfaMs: null,
    firstPcmMs: null,
    setupMs: null, // from the Play click to the send (events.js onSent)
    serverTtfaMs: null,
    receivedSamples: 0,
    announcedSamples: 0, // sum of audio_end.samples
    streamRate: null,
    okCount: null,
    failCount: null,
    elapsedTotalSec: null,
    longestTaskMs: 0, // the page's longest main-thread task meanwhile (0: none over 50 ms)
  };
}

export const FRESH_SECTION = {
  state: "queued", error: null, synthSec: null, durationSec: null, synthStartedAt: null,
  synthesised: false, played: false, cached: false,
};

/** A section is done when the worker has synthesised it and its audio has played out. */
export function settle(s) {
  if (s.state === "failed" || s.state === "cancelled") return;
  if (s.synthesised && s.played) s.state = "done";
  else if (s.synthesised && s.state !== "playing") s.state = "ready";
}

/**
 * The request is over without the worker's `done` (the page cancelled it and closed the socket, or
 * stopped its play-out): every section not done or failed is cancelled, and so is the run.
 */
export function cancelRun(run, sections) {
  for (const s of sections) {
    if (!["done", "failed", "idle"].includes(s.state)) s.state = "cancelled";
  }
  if (run) Object.assign(run, { running: false, cancelled: true, audioDrained: true });
}

/**
 * The counts the summary shows: the worker's (`done`), else the rows' own (no `done` came: the socket
 * closed, or the page gave the request up), so the summary never contradicts the slide list.
 */
function outcome(run, sections) {
  if (run.okCount != null) return { ok: run.okCount, failed: run.failCount ?? 0 };
  return {
    ok: sections.filter((s) => s.synthesised && s.state !== "failed").length,
    failed: sections.filter((s) => s.state === "failed").length,
  };
}

const synthesisTime = (run) => (run.elapsedTotalSec != null ? ` in ${run.elapsedTotalSec.toFixed(2)} s of synthesis` : "");

/**
 * A cancelled run in the slide list's words: how many of its sections played out, failed and were
 * cancelled (they add up to the run's), then how many the worker had synthesised. It said
 * "Cancelled: 3 ok, 0 failed" for a play-out stopped in its last section, whose row said cancelled,
 * and "Cancelled: 0 ok, 0 failed" for three sections cancelled before any audio, none of them named.
 */
function cancelledSummary(run, sections) {
  const rows = (state) => sections.filter((s) => s.state === state).length;
  const { ok } = outcome(run, sections);
  return `Cancelled: ${rows("done")} of ${run.total} played, ${rows("failed")} failed, ${rows("cancelled")} cancelled; ` +
    `${ok} synthesised${synthesisTime(run)}.`;
}

/** The numbers the page shows (and `window.npuPlayer.snapshot()` gives tests). */
export function figures(state) {
  const run = state.run;
  const status = state.playerStatus ?? {};
  const rate = state.player?.sampleRate ?? 0;
  const rows = run?.sections ?? state.sections; // (the list's, once it ended and the text was edited)
  let summary = "No request yet.";
  if (run?.running) summary = `Running: ${state.sections.filter((s) => s.synthesised).length} of ${run.total} synthesised.`;
  else if (run?.refused) summary = `Not run: the worker refused the request (${run.refused}).`;
  else if (run?.cancelled) summary = cancelledSummary(run, rows);
  else if (run) {
    const { ok, failed } = outcome(run, rows);
    summary = `Finished: ${ok} ok, ${failed} failed${synthesisTime(run)}.`;
  }
  if (run) summary += ` Longest page task: ${run.longestTaskMs ? `${Math.round(run.longestTaskMs)} ms` : "none over 50 ms"}.`;
  return {
    ttfaMs: run?.ttfaMs ?? null,
    serverTtfaMs: run?.serverTtfaMs ?? null,
    firstPcmMs: run?.firstPcmMs ?? null,
    setupMs: run?.setupMs ?? null,
    longestTaskMs: run?.longestTaskMs ?? null,
    bufferedMs: rate ? (1000 * (status.bufferedFrames ?? 0)) / rate : 0,
    underruns: status.underruns ?? 0,
    buffering: Boolean(status.buffering) && Boolean(run?.running || (run && !run.audioDrained && !run.cancelled)),
    starvedMs: rate ? (1000 * (status.starvedFrames ?? 0)) / rate : 0,
    receivedSamples: run?.receivedSamples ?? 0,
    playedSourceSamples: status.playedSourceSamples ?? 0,
    playedFrames: status.playedFrames ?? 0,
    audioClockFrame: status.frame ?? 0,
    contextRate: rate,
    contextTime: state.player?.context.currentTime ?? 0,
    streamRate: run?.streamRate ?? null,
    outputLatencyMs: state.player ? 1000 * (state.player.context.outputLatency || state.player.context.baseLatency) : null,
    summary,
  };
}
