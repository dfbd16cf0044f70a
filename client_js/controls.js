/**
 * Play / Pause / Cancel: making the AudioContext and the socket when Play needs them, sending the
 * request, stopping it (asking the worker, or only the play-out), and starting over at a new rate.
 * What the socket and the worklet report back is handled in events.js, wired in by main.js (`handleWith`).
 */

import { Channel, socketRefusedAdvice, socketUrl } from "./channel.js";
import { checkHealth, streamRateKnown } from "./health.js";
import { refreshInput } from "./input.js";
import { listedLanguages, unspokenLanguage } from "./languages.js";
import { FRESH_SECTION, cancelRun, newRun } from "./model.js";
import { Player } from "./player.js";
import { $, base, playingOut, state, token, updateButtons } from "./state.js";
import { logLine, renderSlides, showMessage } from "./view.js";

let handlers = null; // {onEvent, onClosed, onSent, onReceived, onPlayerReport}: see events.js

/** The callbacks for what each new channel and player report (set once by main.js). */
export function handleWith(callbacks) {
  handlers = callbacks;
}

/** The AudioContext and worklet (created on the first Play: a user gesture) and the open socket. */
async function ensurePlayer() {
  if (!state.player) {
    // At the stream's rate: the browser converts to the device's rate (no resampling in script).
    const sampleRate = state.forcedRate || state.streamRate || state.worker.health?.sample_rate || undefined;
    state.player = await Player.create({ sampleRate });
    state.streamRate = null;
    state.player.subscribe(handlers.onPlayerReport);
  }
  await state.player.resume();
}

async function ensureChannel() {
  if (!state.channel) {
    const { onEvent, onClosed, onSent, onReceived } = handlers;
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

export async function play() {
  if (starting) return;
  starting = true;
  try {
    await startPlay(performance.now());
  } finally {
    starting = false;
  }
}

async function startPlay(clickedAt) {
  if (state.run?.running || playingOut()) return; // paused or not: Resume plays on, Cancel then Play starts anew
  refreshInput();
  if (!state.sections.length) {
    showMessage("Nothing to say: paste text or load a lecture JSON first.", "warn");
    return;
  }
  const unspoken = unspokenLanguage($("lang").value.trim() || "ko", listedLanguages(state.worker.health));
  if (unspoken) {  // nothing sent: the worker would refuse it (UnknownLanguage) once connected
    showMessage(unspoken, "error");
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
  // The voice this request names (null: the worker's default), so a refusal can say whose voice it was.
  state.run = { ...newRun(state.sections), clickedAt, speedFactor: Number($("speed").value), voice: $("voice").value || null };
  showMessage("");
  state.channel.send({
    type: "synth_batch",
    sections: state.sections.map(({ idx, text }) => ({ idx, text })),
    lang: $("lang").value.trim() || "ko",
    speed_factor: state.run.speedFactor,
    ref_wav: state.run.voice,
    audio: true,
  });
  renderSlides(state.sections);
  updateButtons();
}

async function explainConnectFailure(error) {
  const health = await checkHealth();
  const text = health.state === "ready" && error.name !== "TimeoutError"
    ? socketRefusedAdvice(window.location.origin, Boolean(token))
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
  state.forcedRate = undefined; // a forced rate that does not match the stream is given up
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
export function cancel() {
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

export async function togglePause() {
  if (!state.player) return;
  if (state.player.paused) await state.player.resume();
  else await state.player.pause();
  updateButtons();
}
