/**
 * Type checks for what a worker sends the page: `/health` bodies and `/ws` text events.
 *
 * `?worker=` may point the page at any address, so the page does not trust a body's types: a field
 * of the wrong type (a number where a path is expected, a string where a count is) would throw deep
 * in rendering or the audio path and leave the page half-updated. Each check returns a sentence
 * naming the first bad field, or null when every field the page reads has the type the protocol
 * gives it. Fields the page does not read are not checked (newer workers may add some).
 */

const isCount = (value) => Number.isSafeInteger(value) && value >= 0;
const isSeconds = (value) => typeof value === "number" && Number.isFinite(value) && value >= 0;
const isRate = (value) => Number.isSafeInteger(value) && value >= 8000 && value <= 384000;
const isText = (value) => typeof value === "string";

// field → [check, what it must be]; a field that is absent or null is not checked here.
const FIELDS = {
  event: [isText, "a string"],
  idx: [isCount, "a non-negative integer"],
  total: [isCount, "a non-negative integer"],
  seq: [isCount, "a non-negative integer"],
  sample_rate: [isRate, "an integer sample rate (8000–384000)"],
  samples: [isCount, "a non-negative integer"],
  chunks: [isCount, "a non-negative integer"],
  ok_count: [isCount, "a non-negative integer"],
  fail_count: [isCount, "a non-negative integer"],
  jobs_running: [isCount, "a non-negative integer"],
  elapsed_sec: [isSeconds, "a non-negative number"],
  duration_sec: [isSeconds, "a non-negative number"],
  elapsed_total_sec: [isSeconds, "a non-negative number"],
  load_seconds: [isSeconds, "a non-negative number"],
  ttfa_ms: [isSeconds, "a non-negative number"],
  cancelled: [(value) => typeof value === "boolean", "true or false"],
  status: [isText, "a string"],
  error: [isText, "a string"],
  backend: [isText, "a string"],
  device: [isText, "a string"],
  format: [isText, "a string"],
  ref_wav: [isText, "a string"],
};

// Per event kind, the fields the page needs to be there.
const REQUIRED = {
  progress: ["idx", "status"],
  error: ["error"],
  audio_start: ["idx", "sample_rate"],
  audio_end: ["idx", "samples"],
  first_audio: ["ttfa_ms"],
};

function fieldProblem(body, field) {
  const value = body[field];
  if (value === undefined || value === null || !(field in FIELDS)) return null;
  const [check, wanted] = FIELDS[field];
  return check(value) ? null : `${field} must be ${wanted}, not ${JSON.stringify(value)?.slice(0, 40)}`;
}

function firstProblem(body, fields) {
  for (const field of fields) {
    const problem = fieldProblem(body, field);
    if (problem) return problem;
  }
  return null;
}

/** A `/ws` text event (already a JSON object): null when the page can act on it, else why not. */
export function eventProblem(event) {
  if (!isText(event.event)) return "an event without an `event` kind (a string)";
  for (const field of REQUIRED[event.event] ?? []) {
    if (event[field] === undefined || event[field] === null) return `a ${event.event} event without ${field}`;
  }
  return firstProblem(event, Object.keys(event));
}

function voiceProblem(item) {
  if (isText(item)) return null;
  if (item === null || typeof item !== "object" || Array.isArray(item)) return "voices must list paths or {name, ref_wav} objects";
  if (!isText(item.ref_wav)) return "each voice's ref_wav must be a string";
  if (item.name !== undefined && item.name !== null && !isText(item.name)) return "each voice's name must be a string";
  return null;
}

/** A `/health` body (any status): null when the page can show it, else why not. */
export function healthProblem(body) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "the body is not a JSON object";
  const problem = firstProblem(body, ["sample_rate", "jobs_running", "load_seconds", "backend", "ref_wav", "error", "status"]);
  if (problem) return problem;
  if (body.voices !== undefined && body.voices !== null) {
    if (!Array.isArray(body.voices)) return "voices must be a list";
    for (const item of body.voices) {
      const bad = voiceProblem(item);
      if (bad) return bad;
    }
  }
  const range = body.speed_range;
  if (range !== undefined && range !== null) {
    const ok = Array.isArray(range) && range.length === 2 && range.every((v) => typeof v === "number" && Number.isFinite(v) && v > 0) && range[0] < range[1];
    if (!ok) return "speed_range must be two positive numbers, the lower first";
  }
  return null;
}
