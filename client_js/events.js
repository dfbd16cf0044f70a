/**
 * What the worker and the audio thread report: `/ws` events (PROTOCOL §6, a `switch` on `event` whose
 * `default` reports kinds it does not know), the socket's close, and the worklet's reports → the state
 * of the run and its slides.
 */

import { cancel } from "./controls.js";
import { pollHealth, refreshVoices } from "./health.js";
import { cancelRun, figures, settle } from "./model.js";
import { section, state, updateButtons } from "./state.js";
import { logLine, renderFigures, renderSlides, showMessage } from "./view.js";

export function onEvent(event) {
  const run = state.run;
  switch (event.event) {
    case "start":
      if (run) run.started = true;
      pollHealth();
      logLine(`start: ${counted(event.total, "section")} on ${event.backend}/${event.device}`);
      break;
    case "progress": {
      const s = section(event.idx);
      if (!s) break;
      if (event.status === "synth") {
        s.synthStartedAt = performance.now();
        if (s.state === "queued") s.state = "synthesising";
      } else if (event.status === "ok") {
        Object.assign(s, { synthesised: true, synthSec: event.elapsed_sec ?? null,
          durationSec: event.duration_sec ?? null, cached: Boolean(event.cached) });
        settle(s);
      }
      break;
    }
    case "error":
      onErrorEvent(event);
      break;
    case "audio_start":
      if (run) run.streamRate = event.sample_rate;
      break;
    case "audio_end":
      if (run) run.announcedSamples += event.samples;
      logLine(`audio_end ${event.idx}: ${counted(event.samples, "sample")} in ${counted(event.chunks, "chunk")}`);
      break;
    case "first_audio":
      if (run) run.serverTtfaMs = event.ttfa_ms;
      break;
    case "done":
      onDone(event);
      break;
    case "heartbeat":
      break;
    default:
      logLine(`unknown event kind ${JSON.stringify(event.event)} (ignored)`);
      console.warn("npu-worker player: unknown event kind", event);
  }
  renderSlides(state.sections);
  updateButtons();
}

/** "1 section", "2 sections": the log read "start: 1 sections", "in 1 chunks" for a one-slide Play. */
function counted(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function onErrorEvent(event) {
  const s = event.idx != null ? section(event.idx) : null;
  logLine(`error${event.idx != null ? ` ${event.idx}` : ""}: ${event.error}`);
  if (s) {
    Object.assign(s, { state: "failed", error: event.error });
    return;
  }
  const name = String(event.error).split(":")[0];
  // UnknownVoice for a request that named no voice is the worker's own (ZipVoice without --ref-wav has
  // no default voice): no voice was deleted, so its message is shown as it is and no list is read.
  const pickedVoice = Boolean(state.run?.voice);
  const explained = {
    Busy: "The worker is busy: this connection already runs a request. Wait for it or cancel it.",
    Loading: "The worker is still booting (loading its model); try again in a moment.",
    QueueFull: "The worker's queue is full; try again later.",
    NotRunning: "Nothing to cancel: the request had already finished.",
    UnknownVoice: pickedVoice ? "The voice picked is no longer on the worker (deleted after the voice list was read): "
      + "the list has been read again; pick a voice from it and play again." : undefined,
  }[name];
  if (name === "UnknownVoice" && pickedVoice) refreshVoices();  // the list the page offered is out of date
  if (name === "NotRunning" && state.run?.cancelRequested) {
    // The request finished as the cancel went out: the audio is already dropped, so it is a play-out stop.
    cancelRun(state.run, state.sections);
    showMessage("Cancelled: playback stopped (the worker had already finished synthesising).", "info");
    return;
  }
  const run = state.run;
  if (run?.running && run.started && name !== "NotRunning") {
    // The request ran and the worker ended it (SlowConsumer; InternalError, JobNotFound or ModelLoadError,
    // then a 1011 close): kept for the close, which would otherwise say only "connection closed".
    run.error = event.error;
    showMessage(`The worker ended the request: ${event.error}`, "error");
    return;
  }
  showMessage(explained ? `${explained} (${event.error})` : `The worker refused the request: ${event.error}`,
    name === "NotRunning" ? "info" : "error");
  if (state.run && !state.run.started && name !== "NotRunning") {
    // The request never started: nothing more will come for it, and the summary says it did not run.
    Object.assign(state.run, { running: false, audioDrained: true, refused: event.error });
    state.sections.forEach((x) => { if (x.state === "queued") x.state = "idle"; });
  }
}

function onDone(event) {
  const run = state.run;
  if (!run) return;
  // A cancel that crossed the worker's last `done` still dropped the audio: the run is cancelled all the same.
  Object.assign(run, { running: false, cancelled: Boolean(event.cancelled || run.cancelRequested), okCount: event.ok_count,
    failCount: event.fail_count, elapsedTotalSec: event.elapsed_total_sec });
  if (run.cancelled) {
    for (const s of state.sections) {
      if (!["done", "failed"].includes(s.state)) s.state = "cancelled";
    }
  }
  pollHealth();
  logLine(`done: ${event.ok_count} ok, ${event.fail_count} failed in ${event.elapsed_total_sec} s${run.cancelled ? " (cancelled)" : ""}`);
}

export function onClosed(info) {
  logLine(`socket closed: code ${info.code} ${info.reason}`);
  const run = state.run;
  if (run?.running) {
    run.running = false;
    for (const s of state.sections) {
      // A section cut mid-audio is "playing" (its first samples are) but will never be synthesised.
      const cut = s.state === "playing" && !s.synthesised;
      if (cut || ["queued", "synthesising"].includes(s.state)) Object.assign(s, { state: "failed", error: run.error ?? "connection closed" });
    }
    const code = `code ${info.code}${info.reason ? `: ${info.reason}` : ""}`;
    showMessage(run.error
      ? `The worker ended the request: ${run.error} (then closed the connection, ${code}).`
      : `The connection to the worker closed during the request (${code}).`, "error");
  } else if (info.opened) {
    logLine("the worker closed the idle connection; the next Play reconnects");
  }
  state.channel?.close();
  state.channel = null;
  renderSlides(state.sections);
  updateButtons();
}

export function onSent({ request, sentAt }) {
  const run = state.run;
  // The click's wait before the send (a first Play makes the AudioContext, its worklet and the socket):
  // Time to first audio starts at the send, so the caption says what the click waited before it.
  if (run) Object.assign(run, { request, sentAt, setupMs: run.clickedAt != null ? sentAt - run.clickedAt : null });
}

export function onReceived({ samples, at }) {
  const run = state.run;
  if (!run) return;
  if (run.receivedSamples === 0 && run.sentAt != null) run.firstPcmMs = at - performance.timeOrigin - run.sentAt;
  run.receivedSamples += samples;
}

export function onPlayerReport(report) {
  const run = state.run;
  if (report.request != null && run && report.request !== run.request) return;
  switch (report.type) {
    case "status":
      state.playerStatus = report;
      break;
    case "first-audible":
      if (run?.sentAt != null && run.ttfaMs == null) run.ttfaMs = report.audibleAt - run.sentAt;
      logLine(`first audible sample at the output: TTFA ${Math.round(run?.ttfaMs ?? NaN)} ms`);
      break;
    case "section-playing": {
      const s = section(report.idx);
      if (s && !["failed", "cancelled"].includes(s.state)) s.state = "playing";
      break;
    }
    case "section-played": {
      const s = section(report.idx);
      if (s) {
        s.played = true;
        if (s.state === "playing") s.state = s.synthesised ? "done" : "synthesising";
        settle(s);
      }
      break;
    }
    case "drained":
      if (run) run.audioDrained = true;
      for (const s of state.sections.filter((x) => x.synthesised && !x.played)) {
        s.played = true; // the worker sent no audio for it: nothing is left to play
        settle(s);
      }
      state.playerStatus = { ...state.playerStatus, ...report };
      break;
    case "overflow":
      // The worker sends far faster than it plays: cancel rather than let the tab run out of memory. Its
      // `done` may have come first (another path): then the queued half hour's play-out is stopped.
      cancel();
      showMessage(`Cancelled: over ${report.seconds / 60} minutes of audio came ahead of playback; ` +
        "preview fewer sections at a time.", "error");
      break;
    case "processor-error":
      showMessage("Playback stopped: the audio worklet failed (see the browser console).", "error");
      break;
    default:
      logLine(`unknown report from the audio thread: ${JSON.stringify(report)}`);
  }
  if (report.type !== "status") {
    renderSlides(state.sections);
    renderFigures(figures(state)); // at once, so the figures shown at the end are the final ones
    updateButtons();
  }
}
