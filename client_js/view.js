/**
 * Drawing the page from state: the slide list, the figures, the worker pill, messages and the log.
 * Only reads state; main.js owns it.
 */

import { redactToken } from "./channel.js";
import { MAX_LANGUAGES_SHOWN, listedLanguages } from "./languages.js";

const $ = (id) => document.getElementById(id);

const STATE_LABEL = {
  idle: "not sent",
  queued: "queued",
  synthesising: "synthesising",
  ready: "synthesised",
  playing: "playing",
  done: "done",
  failed: "failed",
  cancelled: "cancelled",
};

const ms = (value) => (value == null ? "—" : `${Math.round(value)} ms`);
const seconds = (value) => (value == null ? "" : `${value.toFixed(2)} s`);

let shown = []; // {idx, text} of each row the list shows
const drawn = new WeakMap(); // row → the key of what it shows (see rowKey)

/**
 * Rebuild the list when the set of sections changes; otherwise redraw only the rows whose section
 * changed: every event redraws, and rewriting all rows made a 1000-section run O(n²) in DOM writes.
 */
export function renderSlides(sections) {
  const list = $("slides");
  if (shown.length !== sections.length || sections.some((s, i) => shown[i].idx !== s.idx || shown[i].text !== s.text)) {
    list.replaceChildren(...sections.map(slideRow));
    shown = sections.map(({ idx, text }) => ({ idx, text }));
  }
  sections.forEach((section, i) => {
    const row = list.children[i];
    const key = rowKey(section);
    if (key !== null && drawn.get(row) === key) return;
    drawn.set(row, key);
    updateSlide(row, section);
  });
  const done = sections.filter((s) => s.state === "done").length;
  const failed = sections.filter((s) => s.state === "failed").length;
  $("slide-count").textContent = sections.length
    ? `${sections.length} · ${done} done${failed ? ` · ${failed} failed` : ""}`
    : "— paste text or load a lecture";
}

function slideRow(section) {
  const row = document.createElement("li");
  row.className = "slide";
  row.dataset.idx = String(section.idx);
  row.innerHTML = '<span class="idx"></span><span class="state"></span><span class="text"></span><span class="detail"></span>';
  row.querySelector(".idx").textContent = String(section.idx);
  row.querySelector(".text").textContent = section.text;
  row.querySelector(".text").title = section.text;
  return row;
}

/** What a row shows, as a string; null while its synthesis timer runs (redrawn every time). */
function rowKey(s) {
  if (s.state === "synthesising" && s.synthSec == null && s.synthStartedAt != null) return null;
  return JSON.stringify([s.state, s.error, s.synthSec, s.durationSec, s.cached]);
}

function updateSlide(row, section) {
  row.dataset.state = section.state;
  row.classList.toggle("playing", section.state === "playing");
  const badge = row.querySelector(".state");
  badge.className = `state state-${section.state}`;
  badge.textContent = STATE_LABEL[section.state] ?? section.state;
  const detail = row.querySelector(".detail");
  detail.classList.toggle("error", Boolean(section.error));
  detail.textContent = section.error ?? slideFigures(section);
}

function slideFigures(section) {
  const parts = [];
  if (section.synthSec != null) parts.push(`synthesis ${seconds(section.synthSec)}`);
  else if (section.synthStartedAt != null && section.state === "synthesising") parts.push(`synthesis ${seconds((performance.now() - section.synthStartedAt) / 1000)}…`);
  if (section.durationSec != null) parts.push(`audio ${seconds(section.durationSec)}`);
  if (section.synthSec != null && section.durationSec) parts.push(`RTF ${(section.synthSec / section.durationSec).toFixed(2)}`);
  if (section.cached) parts.push("cached");
  return parts.join(" · ");
}

/** What the Play click waited before the send: a first Play makes the player and the socket then. */
const setupWait = (setupMs) => setupMs == null ? "" : `; the click waited ${Math.round(setupMs)} ms before the send`;

/** The live figures; `figures` comes from main.js's snapshot. */
export function renderFigures(f) {
  $("ttfa").textContent = ms(f.ttfaMs);
  $("ttfa-detail").textContent = f.firstPcmMs == null
    ? "send → first audible sample at the output"
    : `first PCM in at ${Math.round(f.firstPcmMs)} ms, then playback + output latency${setupWait(f.setupMs)}`;
  $("server-ttfa").textContent = ms(f.serverTtfaMs);
  $("buffer").textContent = f.contextRate ? `${Math.round(f.bufferedMs)} ms` : "—";
  $("buffer-meter").value = Math.min(f.bufferedMs, 3000);
  $("buffering").hidden = !f.buffering; // ran dry with audio to come: play-out waits, not a garble
  $("underruns").textContent = f.contextRate ? String(f.underruns) : "—";
  $("starved").textContent = f.contextRate ? `${Math.round(f.starvedMs)} ms of silence while starved` : "\u00a0";
  $("samples").textContent = `${f.receivedSamples.toLocaleString()} / ${f.playedSourceSamples.toLocaleString()}`;
  if (f.contextRate) {
    // The context runs at the stream's rate; the browser converts to the device's rate.
    const mismatch = f.streamRate && f.streamRate !== f.contextRate ? ` (stream ${f.streamRate} Hz: not played)` : "";
    $("rates").textContent = `${f.contextRate} Hz context → device${mismatch}`;
    $("latency").textContent = `output latency ${ms(f.outputLatencyMs)}`;
  }
  $("run-summary").textContent = f.summary;
}

export function renderWorker(status) {
  const pill = $("worker-status");
  pill.className = `pill pill-${status.state}`;
  if (status.state === "ready") {
    const h = status.health;
    const load = h.load_seconds != null ? ` · loaded in ${h.load_seconds.toFixed(1)} s` : "";
    const busy = h.jobs_running ? ` · ${h.jobs_running} running, ${h.queue ?? 0} queued` : " · idle";
    pill.textContent = `${h.backend} on ${h.device}${h.precision ? ` ${h.precision}` : ""}${load}${busy}`;
    pill.title = JSON.stringify(h, null, 1);
    fillLanguages(listedLanguages(h) ?? []);
  } else {
    pill.textContent = { booting: "worker booting…", down: "worker unreachable", refused: "refused" }[status.state] ?? "worker error";
    pill.title = status.message;
  }
}

/** The Language field's list: the worker's languages (text options, at most MAX_LANGUAGES_SHOWN). */
function fillLanguages(codes) {
  const list = $("languages");
  const key = codes.join(" ");
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...codes.slice(0, MAX_LANGUAGES_SHOWN).map((code) => new Option(code, code)));
}

/** One message at a time: kind is "info", "warn" or "error"; empty text hides it. A token is never shown. */
export function showMessage(text, kind = "info") {
  const box = $("message");
  box.hidden = !text;
  box.className = `message ${kind}`;
  box.textContent = text ? redactToken(text) : "";
}

/** A line in the Event log, with any token in it shown as `token=***`. */
export function logLine(text) {
  const log = $("log");
  const stamp = new Date().toISOString().slice(11, 23);
  log.textContent += `${stamp}  ${redactToken(text)}\n`;
  if (log.textContent.length > 60000) log.textContent = log.textContent.slice(-40000);
  log.scrollTop = log.scrollHeight;
}

export function setButtons({ canPlay, canPause, paused, canCancel }) {
  $("play").disabled = !canPlay;
  $("pause").disabled = !canPause;
  $("pause").textContent = paused ? "▶ Resume" : "Pause";
  $("cancel").disabled = !canCancel;
}

/**
 * The voice list: the worker's default, `/health`'s `voices` when it offers some, and the stored voices
 * of `GET /v1/audio/voices` (`stored`, from voices.js: names checked, at most a bounded number). Drawn
 * with `new Option` (text, never HTML); the voice chosen stays chosen while it is still offered.
 * Returns the name of a chosen voice no longer offered (the list fell back to the default), else null.
 */
export function fillOptions(health, stored = { voices: [] }) {
  const voice = $("voice");
  const voices = Array.isArray(health.voices) ? health.voices : [];
  const key = JSON.stringify([health.ref_wav, voices, stored.voices]);
  let lost = null;
  if (voice.dataset.key !== key) {
    voice.dataset.key = key;
    const chosen = voice.value;
    const name = health.ref_wav ? health.ref_wav.split("/").pop() : `${health.backend} voice`;
    const options = [new Option(`default (${name})`, "")];
    for (const item of voices) {
      const path = typeof item === "string" ? item : item.ref_wav;
      options.push(new Option(typeof item === "string" ? item.split("/").pop() : item.name ?? path, path));
    }
    if (stored.voices.length) {
      const group = document.createElement("optgroup");
      group.label = "stored voices";
      for (const { name: value, label, title } of stored.voices) {
        const option = new Option(label, value);
        option.title = title;
        group.append(option);
      }
      options.push(group);
    }
    voice.replaceChildren(...options);
    if ([...voice.options].some((option) => option.value === chosen)) voice.value = chosen;
    else lost = chosen || null;
  }
  if (Array.isArray(health.speed_range) && health.speed_range.length === 2) {
    [$("speed").min, $("speed").max] = health.speed_range;
  }
  return lost;
}

/** The line under the voice list: why stored voices are missing, or how many are not shown. */
export function showVoicesNote(text) {
  const note = $("voice-note");
  note.hidden = !text;
  note.textContent = text ? redactToken(text) : "";
}
