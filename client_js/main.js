/**
 * The page's entry: wires the inputs and buttons to their modules, draws the figures ~10 times a
 * second, and exposes `window.npuPlayer.snapshot()` (the numbers the page shows) to tests.
 *
 * Concerns are split: state.js holds the state, input.js the input, health.js `/health`, controls.js
 * Play / Pause / Cancel, events.js what the socket and the worklet report; channel.js + socket.worker.js
 * own the socket, player.js + pcm-player.worklet.js own playback, view.js draws.
 */

import { cancel, handleWith, play, togglePause } from "./controls.js";
import { onClosed, onEvent, onPlayerReport, onReceived, onSent } from "./events.js";
import { filterVoices, pollHealth, refreshVoices } from "./health.js";
import { loadFile, refreshInput } from "./input.js";
import { figures } from "./model.js";
import { $, playingOut, showSpeed, state } from "./state.js";
import { renderFigures, renderSlides } from "./view.js";

handleWith({ onEvent, onClosed, onSent, onReceived, onPlayerReport });

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
    voices: { offered: [...$("voice").options].map((option) => option.value), note: $("voice-note").textContent },
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
$("file").addEventListener("change", (event) => {
  const file = event.target.files[0];
  event.target.value = ""; // so choosing the same file again (to undo edits) is a change too
  if (file) loadFile(file);
});
$("speed").addEventListener("input", showSpeed);
$("voices-refresh").addEventListener("click", refreshVoices);
$("voice-filter").addEventListener("input", filterVoices);
$("play").addEventListener("click", play);
$("pause").addEventListener("click", togglePause);
$("cancel").addEventListener("click", cancel);
window.addEventListener("pagehide", () => state.channel?.close()); // a normal 1000 close, not a dropped socket
refreshInput();
watchLongTasks();
pollHealth();
tick();
