/**
 * The WebSocket, off the main thread: JSON events go to the page, PCM goes straight to the audio worklet.
 *
 * Binary frames (s16le at the section's `audio_start.sample_rate`) are decoded here and the Float32
 * buffers are *transferred* to the worklet over its own MessagePort, so neither the page's thread nor
 * the audio thread ever decodes or copies audio. No resampling here: the page makes its AudioContext at
 * the stream's rate (`new AudioContext({sampleRate})`) and the browser converts to the device's rate.
 * A stream at another rate than the context's is not played (it would be at the wrong pitch): the page
 * is told (`rate-mismatch`) and makes a new context for the next request.
 *
 * Page → worker: {type: "connect", url}, {type: "audio-port", port, outputRate}, {type: "send", request},
 *                {type: "cancel", remote} (remote: also send the worker a cancel), {type: "close"}
 * Worker → page: {type: "open"}, {type: "closed", code, reason, wasClean, opened}, {type: "event", event},
 *                {type: "sent", request, sentAt}, {type: "received", idx, samples, at}, {type: "protocol-error", message},
 *                {type: "rate-mismatch", streamRate, contextRate}
 * Times are absolute (timeOrigin + now) because a worker's performance clock has its own origin.
 */

import { eventProblem } from "./wire.js";

let socket = null;
let audioPort = null;
let outputRate = 0;
let request = 0; // id of the request whose audio is being forwarded; 0 = none
let live = false; // between the request's send and its `done` (or the socket's close): events may come
let dropping = false; // after a cancel: PCM still in flight is not played
let section = null; // {idx, sampleRate, samples, odd} between audio_start and audio_end

const absoluteNow = () => performance.timeOrigin + performance.now();
const report = (message) => self.postMessage(message);
const toWorklet = (message, transfer = []) => audioPort?.postMessage(message, transfer);

self.onmessage = (event) => {
  const message = event.data;
  switch (message.type) {
    case "connect":
      connect(message.url);
      break;
    case "audio-port":
      audioPort = message.port;
      outputRate = message.outputRate;
      break;
    case "send":
      send(message.request);
      break;
    case "cancel":
      cancel(message.remote);
      break;
    case "close":
      if (socket) socket.close(1000, "page closed the channel");
      else report({ type: "closed", code: 1000, reason: "", wasClean: true, opened: false });
      break;
    default:
      report({ type: "protocol-error", message: `socket worker: unknown command ${message.type}` });
  }
};

function connect(url) {
  if (socket && socket.readyState <= WebSocket.OPEN) return;
  let opened = false;
  socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    opened = true;
    report({ type: "open" });
  };
  socket.onclose = (event) => {
    finishAudio();
    socket = null;
    report({ type: "closed", code: event.code, reason: event.reason, wasClean: event.wasClean, opened });
  };
  socket.onmessage = (event) => {
    if (typeof event.data === "string") onText(event.data);
    else onBinary(event.data);
  };
}

function send(body) {
  if (!socket || socket.readyState !== WebSocket.OPEN) {
    report({ type: "protocol-error", message: "the socket is not open" });
    return;
  }
  request += 1;
  live = true;
  dropping = false;
  section = null;
  toWorklet({ type: "begin", request });
  const sentAt = absoluteNow();
  socket.send(JSON.stringify(body));
  report({ type: "sent", request, sentAt });
}

function cancel(remote) {
  if (remote && socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "cancel" }));
  dropping = true;
  section = null;
  toWorklet({ type: "flush", request });
}

function onText(text) {
  let event;
  try {
    event = JSON.parse(text);
  } catch (error) {
    report({ type: "protocol-error", message: `a text frame is not JSON: ${error.message}` });
    return;
  }
  if (event === null || typeof event !== "object" || Array.isArray(event)) {
    report({ type: "protocol-error", message: `a text frame is not a JSON object: ${text.slice(0, 80)}` });
    return;
  }
  const problem = eventProblem(event);
  if (problem) {
    report({ type: "protocol-error", message: `an event was dropped: ${problem}` });
    return;
  }
  if (!live && event.event !== "error" && event.event !== "heartbeat") {
    // After `done` (or before any request) nothing was asked for: a worker's extra audio is not played,
    // and a second `done` or a late `progress` does not rewrite the finished run's rows and summary.
    report({ type: "protocol-error", message: `an event ${event.event} came with no request running (ignored)` });
    return;
  }
  if (event.event === "audio_start") startSection(event);
  else if (event.event === "audio_end") endSection(event);
  else if (event.event === "done") finishAudio();
  report({ type: "event", event });
}

function startSection(event) {
  if (dropping) return;
  if (event.format && event.format !== "pcm_s16le") {
    report({ type: "protocol-error", message: `unsupported audio format ${event.format}` });
  }
  if (outputRate && event.sample_rate !== outputRate) {
    dropping = true;
    toWorklet({ type: "flush", request });
    report({ type: "rate-mismatch", streamRate: event.sample_rate, contextRate: outputRate });
    return;
  }
  section = { idx: event.idx, sampleRate: event.sample_rate, samples: 0, odd: null };
  toWorklet({ type: "section", request, idx: event.idx });
}

function endSection(event) {
  if (dropping || !section) return;
  if (section.odd !== null) {
    report({ type: "protocol-error", message: `section ${section.idx}'s audio ended on half a sample (an odd byte count)` });
  }
  toWorklet({ type: "section-end", request, idx: event.idx });
  section = null;
}

function finishAudio() {
  const wasLive = live;
  live = false;
  if (dropping || !wasLive) return;
  toWorklet({ type: "end", request });
}

function onBinary(bytes) {
  if (dropping) return;
  if (!section) {
    report({ type: "protocol-error", message: "a binary frame arrived outside audio_start/audio_end" });
    return;
  }
  const samples = s16leToFloat32(withOddByte(bytes));
  section.samples += samples.length;
  report({ type: "received", idx: section.idx, samples: samples.length, at: absoluteNow() });
  forward(samples);
}

/**
 * A frame may end in the middle of a sample: its last byte is kept and put before the next frame's, so
 * later samples are not shifted by a byte (which would play as full-scale noise).
 */
function withOddByte(bytes) {
  if (section.odd === null && bytes.byteLength % 2 === 0) return bytes; // the usual case: no copy
  const carried = section.odd === null ? 0 : 1;
  const whole = new Uint8Array(carried + bytes.byteLength);
  if (carried) whole[0] = section.odd;
  whole.set(new Uint8Array(bytes), carried);
  section.odd = whole.length % 2 ? whole[whole.length - 1] : null;
  return whole.buffer.slice(0, whole.length - (whole.length % 2));
}

/** s16le bytes → float32 in [-1, 1) (browsers run little-endian, so an Int16Array view reads s16le). */
function s16leToFloat32(bytes) {
  const pcm = new Int16Array(bytes, 0, bytes.byteLength >> 1);
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i] / 32768;
  return out;
}

/** Hand a Float32 chunk to the worklet, transferring (not copying) its buffer. */
function forward(samples) {
  if (samples.length === 0) return;
  const data = samples.buffer;
  toWorklet({ type: "pcm", request, data, length: samples.length, sourceSamples: samples.length }, [data]);
}
