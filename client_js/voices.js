/**
 * The stored voices a preview can speak with: `GET /v1/audio/voices`, read and bounded.
 *
 * A `/ws` request names a stored voice by its name in `ref_wav` (docs/protocol.md, *Named voices*), so
 * the page offers the uploads and `--voices-dir` voices; an engine's own voices (espeak's languages) are
 * the Language field's business, and `default` is the page's "worker default". The list needs the token
 * (sent as a header, never in a URL), and `?worker=` may name any server: a name that breaks the voice
 * name rule (HTML, a path, 10 000 characters) is never offered, and at most MAX_VOICES_SHOWN are.
 */

import { MAX_VOICES_BYTES, readJson } from "./bounded_json.js";

export const MAX_VOICES_SHOWN = 500;
export const VOICES_TIMEOUT_MS = 5000;
const VOICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/; // the worker's own rule: 1–64 such characters, no ".."
const STORED = new Set(["uploaded", "directory"]);
const ONLY_DEFAULT = "only the worker's default voice is offered";

/**
 * Whether the worker's engine speaks with a stored voice: espeak-ng has a voice of its own for each
 * language (the Language field) and ignores reference audio (docs/protocol.md, *Named voices*), so a
 * stored voice picked there was sent, and played in espeak's voice without a word.
 */
export function speaksWithStoredVoices(health) {
  return health?.backend !== "espeak-ng";
}

export const NO_STORED_VOICES = "espeak-ng speaks with its own voice for each language (the Language field) " +
  "and uses no reference audio: stored voices are not offered on this worker";

/** What the list offers for `health`: `listed` as the filter and the voice chosen show it, or none. */
export function offeredVoices(health, listed, filter, keep = "") {
  if (!speaksWithStoredVoices(health)) return { voices: [], all: [], total: 0, skipped: 0, problem: NO_STORED_VOICES };
  return shownVoices(listed, filter, keep);
}

/**
 * The stored voices of a `GET /v1/audio/voices` body: {voices: [{name, label, title}], total, skipped,
 * problem}. `total` counts the stored voices listed, `skipped` those whose name breaks the rule.
 */
export function storedVoices(body, limit = MAX_VOICES_SHOWN) {
  if (body === null || typeof body !== "object" || !Array.isArray(body.data)) {
    return { voices: [], total: 0, skipped: 0, problem: `the voice list has no \`data\` list: ${ONLY_DEFAULT}` };
  }
  const all = [];
  let total = 0;
  let skipped = 0;
  for (const entry of body.data) {
    if (entry === null || typeof entry !== "object" || !STORED.has(entry.source)) continue;
    if (typeof entry.name !== "string" || !VOICE_NAME.test(entry.name) || entry.name.includes("..")) {
      skipped += 1;
      continue;
    }
    total += 1;
    const seconds = typeof entry.duration_sec === "number" && Number.isFinite(entry.duration_sec) ? ` (${entry.duration_sec.toFixed(1)} s)` : "";
    const text = typeof entry.ref_text === "string" ? entry.ref_text.slice(0, 200) : "";
    all.push({ name: entry.name, label: `${entry.name}${seconds}`, title: text });
  }
  return { voices: all.slice(0, limit), all, total, skipped, problem: null };
}

/**
 * The stored voices offered for the filter box's text (names holding it, any case): at most `limit`
 * of them, and `keep` (the voice chosen) whenever it is stored, so a filter never unpicks it. Every
 * stored voice can be found so, where only the first `limit` could be picked.
 */
export function shownVoices(listed, filter, keep = "", limit = MAX_VOICES_SHOWN) {
  const all = listed.all ?? listed.voices;
  const wanted = filter.trim().toLowerCase();
  const matching = wanted ? all.filter((voice) => voice.name.toLowerCase().includes(wanted)) : all;
  const voices = matching.slice(0, limit);
  const kept = keep && !voices.some((voice) => voice.name === keep) && all.find((voice) => voice.name === keep);
  return { ...listed, voices: kept ? [kept, ...voices] : voices, total: matching.length, filter: wanted };
}

/** The line shown under the voice list: why it is missing, or what of it is not shown; "" when whole. */
export function voicesNote({ voices, total, skipped, problem, filter }) {
  if (problem) return problem;
  const parts = [];
  if (filter) parts.push(`${total} stored voice${total === 1 ? "" : "s"} matching "${filter.slice(0, 64)}"${total > voices.length ? `, showing ${voices.length}` : ""}`);
  else if (total > voices.length) parts.push(`showing ${voices.length} of ${total} stored voices (type in the filter box to find the others)`);
  if (skipped) parts.push(`${skipped} voice${skipped === 1 ? "" : "s"} with a name that is no voice name not offered`);
  if (!total && !skipped && !filter) parts.push("no stored voices yet (upload one with POST /v1/audio/voices)");
  return parts.join("; ");
}

/** Why the list could not be had, from an answer that was not a 200 (`body`: its JSON, or null). */
function refusal(status, body) {
  if (status === 401) {
    return `the worker wants a token for its voice list (open the page with ?token= followed by it): ${ONLY_DEFAULT}`;
  }
  if (status === 404) return `this worker has no voice list (GET /v1/audio/voices answered 404): ${ONLY_DEFAULT}`;
  const said = body?.error?.message ?? body?.error;
  const words = typeof said === "string" ? `: ${said.slice(0, 200)}` : "";
  return `GET /v1/audio/voices answered ${status}${words}; ${ONLY_DEFAULT}`;
}

/**
 * GET /v1/audio/voices with the page's token as `Authorization: Bearer` (the address shown never holds
 * it): the stored voices, or a `problem` sentence saying why there are none to offer (a body over
 * `maxBytes` too: read up to it, no further). Never throws.
 */
export async function fetchVoices(
  base, token, { timeoutMs = VOICES_TIMEOUT_MS, limit = MAX_VOICES_SHOWN, maxBytes = MAX_VOICES_BYTES } = {},
) {
  const url = new URL("v1/audio/voices", base);
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  let response;
  try {
    response = await fetch(url, { cache: "no-store", headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const why = error?.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : "the request failed";
    return { voices: [], total: 0, skipped: 0, problem: `cannot fetch the voice list from ${url.origin} (${why}): ${ONLY_DEFAULT}` };
  }
  let body = null;
  try {
    body = await readJson(response, maxBytes);
  } catch (error) {
    if (error?.name === "TimeoutError") {  // the head came, the body did not: it was said to be no JSON
      const problem = `cannot fetch the voice list from ${url.origin} (its body did not arrive within ${timeoutMs / 1000} s): ${ONLY_DEFAULT}`;
      return { voices: [], total: 0, skipped: 0, problem };
    }
    if (error?.name === "BodyTooLarge") {  // read whole before: a hostile ?worker= filled the page's memory
      const problem = `GET /v1/audio/voices answered ${response.status}, and ${error.message}: ${ONLY_DEFAULT}`;
      return { voices: [], total: 0, skipped: 0, problem };
    }
    body = null;
  }
  if (!response.ok) return { voices: [], total: 0, skipped: 0, problem: refusal(response.status, body) };
  if (body === null) {
    return { voices: [], total: 0, skipped: 0, problem: `GET /v1/audio/voices answered with a body that is not JSON: ${ONLY_DEFAULT}` };
  }
  return storedVoices(body, limit);
}
