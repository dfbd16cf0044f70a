/**
 * The page's one state object, the worker's address and token (read once from the address bar), and
 * what follows from the state for the buttons. Every other page module reads and writes `state` here.
 */

import { workerBase } from "./channel.js";
import { setButtons } from "./view.js";

export const $ = (id) => document.getElementById(id);
export const base = workerBase();

const query = new URLSearchParams(window.location.search);
export const token = query.has("token") ? query.get("token") || "" : storedToken(); // `?token=`: none
if (query.has("token")) {
  // Read once, then out of the address bar (history, bookmarks, screen shares); kept for this tab only.
  keepToken(token);
  const clean = new URL(window.location.href);
  clean.searchParams.delete("token");
  history.replaceState(history.state, "", clean);
}

/**
 * The token survives a reload of this tab (it had left the address bar, so a reload lost it) in
 * sessionStorage: this tab's, gone when it closes; never localStorage (kept on disk, read by every tab
 * of the origin for good) nor the URL. Keyed by the worker's address: a token for one worker is never
 * sent to another named with ?worker=. Storage the browser refuses (a privacy mode) keeps the old way.
 */
function tokenKey() {
  return `npu-worker token for ${base}`;
}

function storedToken() {
  try {
    return window.sessionStorage.getItem(tokenKey()) || "";
  } catch {
    return "";
  }
}

function keepToken(value) {
  try {
    if (value) window.sessionStorage.setItem(tokenKey(), value);
    else window.sessionStorage.removeItem(tokenKey()); // `?token=` empty: forget the one kept
  } catch {
    // not kept: the next reload asks for ?token= again
  }
}

export const state = {
  worker: { state: "unknown", message: "" },
  sections: [], // {idx, text, state, synthSec, durationSec, cached, error, synthStartedAt, synthesised, played}
  run: null, // the current/last request, see newRun()
  player: null,
  channel: null,
  playerStatus: null,
  streamRate: null, // set when a stream came at another rate than the player's: the next player's rate
  forcedRate: Number(query.get("rate")) || undefined, // ?rate=24000: force the AudioContext's rate
  voices: { voices: [], total: 0, skipped: 0, problem: null }, // the stored voices (voices.js)
};

export const section = (idx) => state.sections.find((s) => s.idx === idx);

/** The request is over but its audio still plays out of the buffer. */
export function playingOut() {
  return Boolean(state.run && !state.run.audioDrained && state.run.started);
}

/** The speed chosen, and while a request plays at another one, that it applies from the next Play. */
export function showSpeed() {
  const chosen = Number($("speed").value);
  const playing = state.run?.running || playingOut() ? state.run.speedFactor : null;
  $("speed-value").textContent = playing != null && playing !== chosen
    ? `${chosen.toFixed(2)}× from the next Play (this one: ${playing.toFixed(2)}×)`
    : `${chosen.toFixed(2)}×`;
}

/** The buttons (and the speed's label) for the state now: called after every change of state. */
export function updateButtons() {
  showSpeed();
  const busy = Boolean(state.run?.running) || playingOut();
  setButtons({
    // Paused too: Play resumed the paused request, whatever slides the box chose since (Resume does that).
    canPlay: !busy && state.sections.length > 0,
    canPause: busy && Boolean(state.player),
    paused: busy && Boolean(state.player?.paused), // a context held after a cancel has nothing to resume
    canCancel: busy,
  });
}
