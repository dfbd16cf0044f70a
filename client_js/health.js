/**
 * The worker's `/health`, polled and shown; its stored voices (`GET /v1/audio/voices`), asked when it
 * becomes ready and on the refresh button; and, for Play, whether the stream's rate is known yet.
 */

import { fetchHealth } from "./channel.js";
import { $, base, state, token } from "./state.js";
import { fillOptions, logLine, renderWorker, showMessage, showVoicesNote } from "./view.js";
import { MAX_VOICES_SHOWN, fetchVoices, offeredVoices, voicesNote } from "./voices.js";

let healthTimer = null;
let voicesAsked = 0; // the voice lists asked: only the latest one's answer is shown (an older one may come last)

/** Ask /health now and then again later: every 2 s when idle, every second while a request runs. */
export async function pollHealth() {
  clearTimeout(healthTimer);
  const status = await fetchHealth(base);
  const listAgain = status.state === "ready" && (state.worker.state !== "ready" || anotherWorker(state.worker.health, status.health));
  state.worker = status;
  renderWorker(status);
  if (status.state === "ready") showVoices();
  if (listAgain) refreshVoices();
  const idle = !state.run?.running;
  if (idle && status.state !== "ready") showMessage(status.message, status.state === "booting" ? "warn" : "error");
  else if (idle && $("message").dataset.from === "health") showMessage("");
  $("message").dataset.from = idle && status.state !== "ready" ? "health" : "";
  clearTimeout(healthTimer);
  healthTimer = setTimeout(pollHealth, status.state === "ready" && idle ? 2000 : 1000);
}

/**
 * Another worker process (`start_id`) or engine (`backend`: an api node's engine nodes) answers /health:
 * its stored voices, and whether it speaks with them, may differ. A restart within one poll never read
 * as not ready, and the old list and its line stayed (espeak-ng's "not offered" beside offered voices).
 */
function anotherWorker(before, now) {
  return before?.start_id !== now?.start_id || before?.backend !== now?.backend;
}

/** The voice list for what /health and the voice list said last; a chosen voice gone is said. */
function showVoices() {
  const shown = offeredVoices(state.worker.health, state.voices, $("voice-filter").value, $("voice").value);
  const lost = fillOptions(state.worker.health, shown);
  if (lost) showVoicesNote(`the voice ${lost} is no longer offered: Play speaks with the worker's default`);
  return shown;
}

/** The filter box's text changed: the stored voices holding it offered, and the line says how many. */
export function filterVoices() {
  if (state.worker.state !== "ready") return;
  showVoicesNote(voicesNote(showVoices()));
}

/**
 * Ask the worker for its stored voices (the token as a header) and offer them; a list that cannot be
 * had (401, a worker without one, the network) leaves the default and a line saying why.
 */
export async function refreshVoices() {
  const asked = ++voicesAsked;
  const listed = await fetchVoices(base, token);
  if (asked !== voicesAsked) return; // a newer ask's answer is, or will be, the one shown
  state.voices = listed;
  const filter = $("voice-filter");
  const offered = offeredVoices(state.worker.health, listed, filter.value, $("voice").value);
  filter.hidden = !filter.value && (offered.all ?? []).length <= MAX_VOICES_SHOWN;  // only where some are not shown
  showVoicesNote(voicesNote(offered));
  if (listed.problem) logLine(`voice list: ${listed.problem}`);
  if (state.worker.state === "ready") showVoices();
}

/** Ask /health once, outside the polling, and show what it says. */
export async function checkHealth() {
  const status = await fetchHealth(base);
  state.worker = status;
  renderWorker(status);
  return status;
}

/**
 * The AudioContext is made at the stream's rate, so not before that rate is known: a context made while
 * the worker boots (`/health` 503, `sample_rate` null) would run at the device's rate and refuse the
 * stream. Asks `/health` once more when needed; says why Play waits.
 */
export async function streamRateKnown() {
  if (state.forcedRate || state.streamRate || state.worker.health?.sample_rate) return true;
  const status = await checkHealth();
  if (status.health?.sample_rate) return true;
  showMessage(status.state === "booting"
    ? "The worker is still booting (loading its model): press Play again once it is ready."
    : status.message || "The worker has not said its sample rate yet: press Play again in a moment.",
  status.state === "booting" ? "warn" : "error");
  return false;
}
