/**
 * The page: input → request, events → slide states, worklet reports → figures.
 *
 * Concerns are split: channel.js + socket.worker.js own the socket, player.js +
 * pcm-player.worklet.js own playback, view.js draws; this module holds the state and dispatches on
 * each event's `event` name, reporting kinds it does not know.
 */

import { Channel, fetchHealth, socketUrl, workerBase } from "./channel.js";
import { Player } from "./player.js";
import { FRESH_SECTION, cancelRun, figures, newRun, settle } from "./model.js";
import { formatLecture, parseInput, selectSections } from "./sections.js";
import { fillOptions, logLine, renderFigures, renderSlides, renderWorker, setButtons, showMessage } from "./view.js";

const $ = (id) => document.getElementById(id);
const base = workerBase();
const query = new URLSearchParams(window.location.search);
const token = query.get("token") || "";
if (query.has("token")) {
  // Read once, then out of the address bar (history, bookmarks, screen shares); kept in memory only.
  const clean = new URL(window.location.href);
  clean.searchParams.delete("token");
  history.replaceState(history.state, "", clean);
}
let forcedRate = Number(query.get("rate")) || undefined; // ?rate=24000: force the AudioContext's rate
const MAX_FILE_BYTES = 8 * 1024 * 1024; // the worker's default body bound: a larger lecture cannot be sent

const state = {
  worker: { state: "unknown", message: "" },
  sections: [], // {idx, text, state, synthSec, durationSec, cached, error, synthStartedAt, synthesised, played}
  run: null, // the current/last request, see newRun()
  player: null,
  channel: null,
  playerStatus: null,
  streamRate: null, // set when a stream came at another rate than the player's: the next player's rate
};

// ------------------------------------------------------------------------------------------------
// Input

function readSections() {
  const text = $("input").value;
  if (!text.trim()) return { sections: [] };
  const parsed = parseInput(text, $("split").value);
  return { ...parsed, sections: selectSections(parsed.sections, $("range").value) };
}

function refreshInput() {
  if (state.run?.running || playingOut()) return; // the list shows the running request
  try {
    const parsed = readSections();
    if (parsed.lang) $("lang").value = parsed.lang;
    state.sections = parsed.sections.map((s) => ({ ...s, state: "idle" }));
    showMessage(parsed.sections.length || !$("input").value.trim() ? "" : "No section selected.", "warn");
  } catch (error) {
    state.sections = [];
    showMessage(error.message, "error");
  }
  renderSlides(state.sections);
  updateButtons();
}

/** A dropped-in lecture: read as UTF-8; a file that cannot be read says why instead of failing silently. */
async function loadFile(file) {
  if (file.size > MAX_FILE_BYTES) {
    showMessage(`${file.name} is ${(file.size / 1048576).toFixed(1)} MiB; the limit is 8 MiB.`, "error");
    return;
  }
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await file.arrayBuffer());
  } catch (error) {
    const why = error instanceof TypeError ? "it is not UTF-8 text" : error.message;
    showMessage(`Could not load ${file.name}: ${why}.`, "error");
    return;
  }
  try {
    $("input").value = formatLecture(JSON.parse(text));
  } catch {
    $("input").value = text; // not JSON: treat it as pasted text
  }
  refreshInput();
}

// ------------------------------------------------------------------------------------------------
// Worker health

let healthTimer = null;

/** Ask /health now and then again later: every 2 s when idle, every second while a request runs. */
async function pollHealth() {
  clearTimeout(healthTimer);
  const status = await fetchHealth(base);
  state.worker = status;
  renderWorker(status);
  if (status.state === "ready") fillOptions(status.health);
  const idle = !state.run?.running;
  if (idle && status.state !== "ready") showMessage(status.message, status.state === "booting" ? "warn" : "error");
  else if (idle && $("message").dataset.from === "health") showMessage("");
  $("message").dataset.from = idle && status.state !== "ready" ? "health" : "";
  clearTimeout(healthTimer);
  healthTimer = setTimeout(pollHealth, status.state === "ready" && idle ? 2000 : 1000);
}

// ------------------------------------------------------------------------------------------------
// Play / pause / cancel

/**
 * The AudioContext is made at the stream's rate, so not before that rate is known: a context made while
 * the worker boots (`/health` 503, `sample_rate` null) would run at the device's rate and refuse the
 * stream. Asks `/health` once more when needed; says why Play waits.
 */
async function streamRateKnown() {
  if (forcedRate || state.streamRate || state.worker.health?.sample_rate) return true;
  const status = await fetchHealth(base);
  state.worker = status;
  renderWorker(status);
  if (status.health?.sample_rate) return true;
  showMessage(status.state === "booting"
    ? "The worker is still booting (loading its model): press Play again once it is ready."
    : status.message || "The worker has not said its sample rate yet: press Play again in a moment.",
  status.state === "booting" ? "warn" : "error");
  return false;
}

/** The AudioContext and worklet (created on the first Play: a user gesture) and the open socket. */
async function ensurePlayer() {
  if (!state.player) {
    // At the stream's rate: the browser converts to the device's rate (no resampling in script).
    const sampleRate = forcedRate || state.streamRate || state.worker.health?.sample_rate || undefined;
    state.player = await Player.create({ sampleRate });
    state.streamRate = null;
    state.player.subscribe(onPlayerReport);
  }
  await state.player.resume();
}

async function ensureChannel() {
  if (!state.channel) {
    state.channel = new Channel(socketUrl(base, token), {
      onEvent, onOpen: () => logLine("socket open"), onClosed, onSent, onReceived,
      onProblem: (text) => { logLine(`problem: ${text}`); showMessage(text, "error"); },
      onRateMismatch,
    });
    state.channel.attachAudio(state.player.sourcePort(), state.player.sampleRate);
  }
  try {
    await state.channel.connect();
  } catch (error) {
    const channel = state.channel; // a channel that never opened: the next Play makes a new one
    state.channel = null;
    channel?.close();
    throw error;
  }
}

let starting = false; // a Play between its click and its request: a second click (a double-click) waits for nothing

async function play() {
  if (starting) return;
  starting = true;
  try {
    await startPlay();
  } finally {
    starting = false;
  }
}

async function startPlay() {
  if (state.player?.paused && (state.run?.running || playingOut())) {
    await state.player.resume();
    updateButtons();
    return;
  }
  refreshInput();
  if (!state.sections.length) {
    showMessage("Nothing to say: paste text or load a lecture JSON first.", "warn");
    return;
  }
  if (!state.player && !(await streamRateKnown())) return;
  try {
    await ensurePlayer();
  } catch (error) {
    showMessage(`No sound: ${error.message}`, "error");
    return;
  }
  try {
    await ensureChannel();
  } catch (error) {
    await explainConnectFailure(error);
    return;
  }
  state.sections.forEach((s) => Object.assign(s, FRESH_SECTION));
  state.run = newRun(state.sections);
  showMessage("");
  state.channel.send({
    type: "synth_batch",
    sections: state.sections.map(({ idx, text }) => ({ idx, text })),
    lang: $("lang").value.trim() || "ko",
    speed_factor: Number($("speed").value),
    ref_wav: $("voice").value || null,
    audio: true,
  });
  renderSlides(state.sections);
  updateButtons();
}

async function explainConnectFailure(error) {
  const health = await fetchHealth(base);
  state.worker = health;
  renderWorker(health);
  const text = health.state === "ready" && error.name !== "TimeoutError"
    ? `The worker answers /health but refused the WebSocket: this page's origin (${window.location.origin}) ` +
      "is not allowed or a token is needed (?token=…). Start the worker with --allowed-origins."
    : health.message || error.message;
  logLine(`connect failed: ${error.message}`);
  showMessage(text, "error");
}

/** The worker streams at another rate than the context's (it changed engine): start over at its rate. */
async function onRateMismatch({ streamRate, contextRate: playing }) {
  state.channel?.cancel(); // the worker stops the request; its answer is not awaited (the socket closes)
  cancelRun(state.run, state.sections); // so every section the request left unfinished is cancelled here
  showMessage(`The worker now streams ${streamRate} Hz audio and the player ran at ${playing} Hz: ` +
    "press Play again for a player at the new rate.", "error");
  state.streamRate = streamRate;
  forcedRate = undefined; // a forced rate that does not match the stream is given up
  const [channel, player] = [state.channel, state.player];
  state.channel = null;
  state.player = null;
  await channel?.close();
  await player?.close();
  renderSlides(state.sections);
  updateButtons();
}

const CANCEL_WAIT_MS = 5000; // a worker that has not answered a cancel by then is given up on

/**
 * While the request runs, the worker is asked to stop it (it answers `done` with `cancelled`); once it
 * has finished (the audio is still playing out), there is nothing to ask: playback just stops here.
 */
function cancel() {
  const run = state.run;
  if (!run || !(run.running || playingOut())) return;
  if (run.running && state.channel) {
    state.channel.cancel(); // the socket worker drops audio in flight and flushes the worklet
    Object.assign(run, { cancelRequested: true, audioDrained: true });
    for (const s of state.sections) {
      if (s.state === "playing" || s.state === "ready") s.state = "cancelled";
    }
    showMessage("Cancelled: playback stopped and the worker asked to stop.", "info");
    setTimeout(() => giveUpCancel(run), CANCEL_WAIT_MS);
  } else {
    stopPlayOut();
  }
  renderSlides(state.sections);
  updateButtons();
}

/**
 * The worker has not answered the cancel (it hangs, or ignores it): without its `done` the page would
 * wait for ever with Play disabled. Closing the socket stops the request on the worker too.
 */
function giveUpCancel(run) {
  if (state.run !== run || !run.running) return;
  cancelRun(run, state.sections);
  const channel = state.channel;
  state.channel = null;
  channel?.close();
  showMessage(`Cancelled: the worker did not confirm the cancel within ${CANCEL_WAIT_MS / 1000} s, ` +
    "so the connection was closed (which stops the request).", "error");
  renderSlides(state.sections);
  updateButtons();
}

/** Synthesis is over: drop the audio still queued, and call the rest of the request cancelled. */
function stopPlayOut() {
  if (state.channel) state.channel.cancel({ remote: false });
  else state.player?.flush(state.run.request);
  cancelRun(state.run, state.sections);
  showMessage("Cancelled: playback stopped (the worker had already finished synthesising).", "info");
}

async function togglePause() {
  if (!state.player) return;
  if (state.player.paused) await state.player.resume();
  else await state.player.pause();
  updateButtons();
}

function playingOut() {
  return Boolean(state.run && !state.run.audioDrained && state.run.started);
}

function updateButtons() {
  const busy = Boolean(state.run?.running) || playingOut();
  setButtons({
    canPlay: !busy ? state.sections.length > 0 : Boolean(state.player?.paused),
    canPause: busy && Boolean(state.player),
    paused: Boolean(state.player?.paused),
    canCancel: busy,
  });
}

// ------------------------------------------------------------------------------------------------
// Events from the socket (PROTOCOL §6) and reports from the worklet

const section = (idx) => state.sections.find((s) => s.idx === idx);

function onEvent(event) {
  const run = state.run;
  switch (event.event) {
    case "start":
      if (run) run.started = true;
      pollHealth();
      logLine(`start: ${event.total} sections on ${event.backend}/${event.device}`);
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
      logLine(`audio_end ${event.idx}: ${event.samples} samples in ${event.chunks} chunks`);
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

function onErrorEvent(event) {
  const s = event.idx != null ? section(event.idx) : null;
  logLine(`error${event.idx != null ? ` ${event.idx}` : ""}: ${event.error}`);
  if (s) {
    Object.assign(s, { state: "failed", error: event.error });
    return;
  }
  const name = String(event.error).split(":")[0];
  const explained = {
    Busy: "The worker is busy: this connection already runs a request. Wait for it or cancel it.",
    Loading: "The worker is still booting (loading its model); try again in a moment.",
    QueueFull: "The worker's queue is full; try again later.",
    NotRunning: "Nothing to cancel: the request had already finished.",
  }[name];
  if (name === "NotRunning" && state.run?.cancelRequested) {
    // The request finished as the cancel went out: the audio is already dropped, so it is a play-out stop.
    cancelRun(state.run, state.sections);
    showMessage("Cancelled: playback stopped (the worker had already finished synthesising).", "info");
    return;
  }
  showMessage(explained ? `${explained} (${event.error})` : `The worker refused the request: ${event.error}`,
    name === "NotRunning" ? "info" : "error");
  if (state.run && !state.run.started && name !== "NotRunning") {
    state.run.running = false; // the request never started: nothing more will come for it
    state.run.audioDrained = true;
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

function onClosed(info) {
  logLine(`socket closed: code ${info.code} ${info.reason}`);
  const run = state.run;
  if (run?.running) {
    run.running = false;
    for (const s of state.sections) {
      // A section cut mid-audio is "playing" (its first samples are) but will never be synthesised.
      const cut = s.state === "playing" && !s.synthesised;
      if (cut || ["queued", "synthesising"].includes(s.state)) Object.assign(s, { state: "failed", error: "connection closed" });
    }
    showMessage(`The connection to the worker closed during the request (code ${info.code}${info.reason ? `: ${info.reason}` : ""}).`, "error");
  } else if (info.opened) {
    logLine("the worker closed the idle connection; the next Play reconnects");
  }
  state.channel?.close();
  state.channel = null;
  renderSlides(state.sections);
  updateButtons();
}

function onSent({ request, sentAt }) {
  if (state.run) Object.assign(state.run, { request, sentAt });
}

function onReceived({ samples, at }) {
  const run = state.run;
  if (!run) return;
  if (run.receivedSamples === 0 && run.sentAt != null) run.firstPcmMs = at - performance.timeOrigin - run.sentAt;
  run.receivedSamples += samples;
}

function onPlayerReport(report) {
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
      // The worker sends far faster than it plays: cancel rather than let the tab run out of memory.
      if (run?.running) cancel();
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

// ------------------------------------------------------------------------------------------------
// Figures, drawn ~10 times a second; `window.npuPlayer.snapshot()` exposes the same numbers to tests.


function tick() {
  renderFigures(figures(state));
  if (state.sections.some((s) => s.state === "synthesising")) renderSlides(state.sections);
  setTimeout(tick, 100);
}

window.npuPlayer = {
  snapshot: () => ({
    worker: { state: state.worker.state, message: state.worker.message, jobsRunning: state.worker.health?.jobs_running },
    run: state.run && { ...state.run },
    paused: Boolean(state.player?.paused),
    sections: state.sections.map(({ idx, state: s, error, synthSec, durationSec }) => ({ idx, state: s, error, synthSec, durationSec })),
    figures: figures(state),
    message: $("message").hidden ? "" : $("message").textContent,
  }),
};

/** The page's longest main-thread task while a request plays (≥ 50 ms tasks only: the browser's rule). */
function watchLongTasks() {
  if (!PerformanceObserver.supportedEntryTypes?.includes("longtask")) return;
  new PerformanceObserver((list) => {
    const run = state.run;
    if (!run || !(run.running || playingOut())) return;
    for (const entry of list.getEntries()) run.longestTaskMs = Math.max(run.longestTaskMs, entry.duration);
  }).observe({ type: "longtask" });
}

$("input").addEventListener("input", refreshInput);
$("split").addEventListener("change", refreshInput);
$("range").addEventListener("input", refreshInput);
$("file").addEventListener("change", (event) => event.target.files[0] && loadFile(event.target.files[0]));
$("speed").addEventListener("input", () => { $("speed-value").textContent = `${Number($("speed").value).toFixed(2)}×`; });
$("play").addEventListener("click", play);
$("pause").addEventListener("click", togglePause);
$("cancel").addEventListener("click", cancel);
window.addEventListener("pagehide", () => state.channel?.close()); // a normal 1000 close, not a dropped socket
refreshInput();
watchLongTasks();
pollHealth();
tick();
