/**
 * The page's view of the worker: `/health` over fetch, and the `/ws` channel (PROTOCOL §6) whose socket
 * lives in a dedicated worker (socket.worker.js), so message handling never competes with the page or
 * the audio thread.
 */

import { MAX_HEALTH_BYTES, readJson } from "./bounded_json.js";
import { healthProblem } from "./wire.js";

/**
 * Where the worker is: `?worker=http://host:port` or the origin that served this page. A path is a
 * folder (`https://lab.example/tts` is `…/tts/`): "health" resolved against `…/tts` named `…/health`,
 * another service's, for a worker behind a reverse proxy.
 */
export function workerBase(location = window.location) {
  const chosen = new URLSearchParams(location.search).get("worker");
  const base = new URL(chosen || "./", location.href);
  if ((base.protocol === "http:" || base.protocol === "https:") && !base.pathname.endsWith("/")) base.pathname += "/";
  return base;
}

function withToken(url, token) {
  if (token) url.searchParams.set("token", token);
  return url;
}

/** `text` with every `token=…` query value shown as `token=***`: for whatever the page shows or logs.
 * An empty value (`?token=` then a space, as advice writes it) has no secret and stays as it is. */
export function redactToken(text) {
  return String(text).replace(/([?&]token=)[^&#\s]+/gi, "$1***");
}

/** What the page says when `/health` answers but the WebSocket is refused: a browser is told no status,
 * so a refused origin and a refused token look alike; a page that holds a token names it as the likely
 * fault. Written to pass `redactToken` whole (it said "(?token=…). Start the worker with
 * --allowed-origins.", and the masking ate the sentence from the "…" on). */
export function socketRefusedAdvice(pageOrigin, holdsToken) {
  const origin = `this page's origin (${pageOrigin}) is not allowed: start the worker with --allowed-origins listing it`;
  return holdsToken
    ? `The worker answers /health but refused the WebSocket: the token this page holds is not the worker's ` +
        `(open the page with ?token= followed by the right one), or ${origin}.`
    : `The worker answers /health but refused the WebSocket: ${origin}, or the worker wants a token ` +
        `(open the page with ?token= followed by it).`;
}

export function socketUrl(base, token) {
  const url = new URL("ws", base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return withToken(url, token).href;
}

export const HEALTH_TIMEOUT_MS = 5000;

/**
 * GET /health (it needs no token, so none is sent), classified: {state: "ready"|"booting"|"refused"|"error"|"down", health?, message}.
 * A browser cannot tell "nothing listens" from "the worker refused this origin" (both are a failed
 * fetch), so the message names both causes. A worker that accepts the connection but never answers
 * is "down" after `timeoutMs`, so polling goes on instead of waiting forever.
 */
export async function fetchHealth(base, { timeoutMs = HEALTH_TIMEOUT_MS, pageOrigin } = {}) {
  if (base.protocol !== "http:" && base.protocol !== "https:") {
    // `?worker=localhost:7768` parses as the scheme "localhost:": resolving "health" on it threw, and
    // the page's /health polling stopped with the pill left at "checking the worker…".
    return { state: "error", message: `?worker= must be an http:// or https:// address (such as http://127.0.0.1:7768/), not ${base.href}` };
  }
  const url = new URL("health", base);
  const origin = pageOrigin ?? globalThis.location?.origin;
  let response;
  try {
    response = await fetch(url, { cache: "no-store", signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    if (error?.name === "TimeoutError") {
      return { state: "down", message: `the worker at ${url.origin} did not answer /health within ${timeoutMs / 1000} s` };
    }
    const crossOrigin = url.origin !== origin;
    return {
      state: "down",
      message: crossOrigin
        ? `cannot reach the worker at ${url.origin}: it is down, or it does not allow this page's origin ` +
          `(${origin}; start it with --allowed-origins ${origin})`
        : `cannot reach the worker at ${url.origin}: it is not running`,
    };
  }
  let body = null;
  try {
    body = await readJson(response, MAX_HEALTH_BYTES);
  } catch (error) {
    if (error?.name === "TimeoutError") {
      // Headers came, the body stalled: the worker is as unresponsive as one that never answered (this
      // read "GET /health answered 200: " with no reason, an error state instead of down).
      return { state: "down", message: `the worker at ${url.origin} did not answer /health within ${timeoutMs / 1000} s` };
    }
    if (error?.name === "BodyTooLarge") {  // read whole before: a hostile ?worker= filled the page's memory
      return { state: "error", message: `GET ${url.href} answered ${response.status}, and ${error.message}: is an npu-worker there?` };
    }
    body = null;
  }
  if (body === null && (response.status === 401 || response.status === 403)) {
    // A proxy's login or access page in front of the worker: it read "not JSON: is an npu-worker there?".
    return { state: "refused", message: `GET ${url.href} answered ${response.status}: this page was refused, not by the worker (its answer is not JSON): a proxy in front of it?` };
  }
  if (body === null) {
    // A proxy's error page, or another server at a wrong ?worker= address: it read "answered 502: ".
    return { state: "error", message: `GET ${url.href} answered ${response.status} with a body that is not JSON: is an npu-worker there?` };
  }
  if (response.status >= 400 && response.status < 500) return healthRefused(url, response.status, body);
  const problem = healthProblem(body);
  if (problem) {
    return { state: "error", message: `GET /health answered ${response.status} with a body this page cannot read: ${problem}` };
  }
  if (body?.status === "fail") {
    // It cannot serve now, whatever the code: its engine failed to load (500), or with `--queue redis`
    // Redis is unreachable (503, the model loaded). Every 503 read "booting (loading its model)".
    return { state: "error", health: body, message: `the worker cannot take requests: ${body.error ?? response.status}` };
  }
  if (response.status === 503) {
    return { state: "booting", health: body, message: "the worker is booting (loading its model); waiting…" };
  }
  if (!response.ok) {
    return { state: "error", health: body, message: `GET /health answered ${response.status}: ${body.error ?? ""}` };
  }
  return { state: "ready", health: body, message: "" };
}

export const WORKER_ADDRESS_ADVICE = "?worker= takes the address the worker answers /health under (such as " +
  "http://127.0.0.1:7768/, or the folder a proxy serves it from), not a path of its API such as /v1/";

/**
 * A 4xx to GET /health, in the worker's words, never its JSON: 401/403, it refused this page (its Host or
 * origin rule); any other, no worker answers /health there: `?worker=` names a path of one, such as the
 * OpenAI base URL `…/v1/` (shown as "error must be a string, not {"message":…", cut), or a v1 404, whose
 * `"status": "fail"` read "the worker cannot take requests".
 */
function healthRefused(url, status, body) {
  const said = errorWords(body);
  if (status === 401 || status === 403) return { state: "refused", message: `the worker refused this page: ${said || status}` };
  const answered = `GET ${url.href} answered ${status}${said ? `: ${said}` : ""}`;
  // A proxy's 429 or 408 is about when, not where: the address is right (it was told to change it).
  if (status === 408 || status === 429) return { state: "error", message: `${answered}: polling goes on` };
  return { state: "error", message: `${answered}: ${WORKER_ADDRESS_ADVICE}` };
}

/** An error body's words: v1's `error` string, or OpenAI's `error.message` after its `code`; at most 300 characters. */
function errorWords(body) {
  const error = body?.error;
  if (typeof error === "string") return error.slice(0, 300);
  if (typeof error?.message !== "string") return "";
  const code = typeof error.code === "string" ? `${error.code}: ` : "";
  return `${code}${error.message}`.slice(0, 300);
}

const CLOSE_TIMEOUT_MS = 1000;
export const CONNECT_TIMEOUT_MS = 5000;

/** One WebSocket connection in a worker; callbacks receive plain objects. */
export class Channel {
  constructor(url, { onEvent, onOpen, onClosed, onSent, onReceived, onProblem, onRateMismatch }) {
    this.url = url;
    this.handlers = { onEvent, onOpen, onClosed, onSent, onReceived, onProblem, onRateMismatch };
    this.open = false;
    this.worker = new Worker(new URL("./socket.worker.js", import.meta.url), { type: "module", name: "ws" });
    this.worker.onmessage = (event) => this.onWorkerMessage(event.data);
    this.worker.onerror = (event) => onProblem(`socket worker failed: ${event.message}`);
  }

  attachAudio(port, outputRate) {
    this.worker.postMessage({ type: "audio-port", port, outputRate }, [port]);
  }

  /**
   * Resolves when the socket is open; rejects with a readable reason when it cannot open, or has not
   * opened within `timeoutMs` (a server that accepts but never answers the handshake: Play waited on it
   * for ever, saying nothing), closing the channel then. A second call while connecting gets the same
   * promise (never a new one that leaves the first unsettled).
   */
  connect({ timeoutMs = CONNECT_TIMEOUT_MS } = {}) {
    if (this.open) return Promise.resolve();
    if (this.closing) return Promise.reject(new Error("the channel is closed"));
    if (!this.connecting) {
      this.connecting = new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending = null;
          const error = new Error(`the worker did not complete the WebSocket handshake within ${timeoutMs / 1000} s`);
          error.name = "TimeoutError";
          reject(error);
          this.close();
        }, timeoutMs);
        const settled = (settle) => (value) => {
          clearTimeout(timer);
          settle(value);
        };
        this.pending = { resolve: settled(resolve), reject: settled(reject) };
        this.worker.postMessage({ type: "connect", url: this.url });
      }).finally(() => {
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  send(request) {
    this.worker.postMessage({ type: "send", request });
  }

  /** Drop the audio queued and in flight; `remote`: also ask the worker to stop the request. */
  cancel({ remote = true } = {}) {
    this.worker.postMessage({ type: "cancel", remote });
  }

  /**
   * Close the socket with 1000 (normal closure), then end the socket worker once it says the socket is
   * closed (at most CLOSE_TIMEOUT_MS later). Terminating at once would drop the socket without a close
   * frame, which the worker sees as an abnormal 1006.
   */
  close() {
    if (!this.closing) {
      this.closing = new Promise((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          this.worker.terminate();
          resolve();
        };
        const timer = setTimeout(finish, CLOSE_TIMEOUT_MS);
        this.afterClose = finish;
      });
      this.pending?.reject(new Error("the channel was closed while connecting"));
      this.pending = null;
      this.worker.postMessage({ type: "close" });
    }
    return this.closing;
  }

  onWorkerMessage(message) {
    const h = this.handlers;
    // Once the page has closed the channel, what the socket still delivers (the answer to a cancel the
    // page sent just before, say) is not the page's business: only the close itself is awaited.
    if (this.closing && message.type !== "closed") return;
    switch (message.type) {
      case "open":
        this.open = true;
        this.pending?.resolve();
        this.pending = null;
        h.onOpen?.();
        break;
      case "closed":
        this.open = false;
        if (this.pending) {
          this.pending.reject(new Error(`the worker refused the WebSocket at ${redactToken(this.url)} (or is down)`));
          this.pending = null;
        }
        if (this.afterClose) this.afterClose(); // the page closed it: nothing to report
        else h.onClosed?.(message);
        break;
      case "event":
        h.onEvent(message.event);
        break;
      case "sent":
        h.onSent?.({ request: message.request, sentAt: message.sentAt - performance.timeOrigin });
        break;
      case "received":
        h.onReceived?.(message);
        break;
      case "protocol-error":
        h.onProblem(message.message);
        break;
      case "rate-mismatch":
        if (h.onRateMismatch) h.onRateMismatch(message);
        else h.onProblem(`the stream is at ${message.streamRate} Hz, the audio context at ${message.contextRate} Hz`);
        break;
      default:
        h.onProblem(`socket worker sent an unknown message kind ${message.type}`);
    }
  }
}
