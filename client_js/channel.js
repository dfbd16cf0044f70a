/**
 * The page's view of the worker: `/health` over fetch, and the `/ws` channel (PROTOCOL §6) whose socket
 * lives in a dedicated worker (socket.worker.js), so message handling never competes with the page or
 * the audio thread.
 */

/** Where the worker is: `?worker=http://host:port` or the origin that served this page. */
export function workerBase(location = window.location) {
  const chosen = new URLSearchParams(location.search).get("worker");
  return new URL(chosen || "./", location.href);
}

function withToken(url, token) {
  if (token) url.searchParams.set("token", token);
  return url;
}

export function socketUrl(base, token) {
  const url = new URL("ws", base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return withToken(url, token).href;
}

/**
 * GET /health, classified: {state: "ready"|"booting"|"refused"|"error"|"down", health?, message}.
 * A browser cannot tell "nothing listens" from "the worker refused this origin" (both are a failed
 * fetch), so the message names both causes.
 */
export async function fetchHealth(base, token) {
  const url = withToken(new URL("health", base), token);
  let response;
  try {
    // The token goes in the query (as on the socket): a header would need a CORS preflight.
    response = await fetch(url, { cache: "no-store" });
  } catch {
    const crossOrigin = url.origin !== window.location.origin;
    return {
      state: "down",
      message: crossOrigin
        ? `cannot reach the worker at ${url.origin}: it is down, or it does not allow this page's origin ` +
          `(${window.location.origin}; start it with --allowed-origins ${window.location.origin})`
        : `cannot reach the worker at ${url.origin}: it is not running`,
    };
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (response.status === 503) {
    return { state: "booting", health: body, message: "the worker is booting (loading its model); waiting…" };
  }
  if (response.status === 401 || response.status === 403) {
    return { state: "refused", health: body, message: `the worker refused this page: ${body?.error ?? response.status}` };
  }
  if (!response.ok || !body) {
    return { state: "error", health: body, message: `GET /health answered ${response.status}: ${body?.error ?? ""}` };
  }
  return { state: "ready", health: body, message: "" };
}

/** One WebSocket connection in a worker; callbacks receive plain objects. */
export class Channel {
  constructor(url, { onEvent, onOpen, onClosed, onSent, onReceived, onProblem }) {
    this.url = url;
    this.handlers = { onEvent, onOpen, onClosed, onSent, onReceived, onProblem };
    this.open = false;
    this.worker = new Worker(new URL("./socket.worker.js", import.meta.url), { type: "module", name: "ws" });
    this.worker.onmessage = (event) => this.onWorkerMessage(event.data);
    this.worker.onerror = (event) => onProblem(`socket worker failed: ${event.message}`);
  }

  attachAudio(port, outputRate) {
    this.worker.postMessage({ type: "audio-port", port, outputRate }, [port]);
  }

  /** Resolves when the socket is open; rejects with a readable reason when it cannot open. */
  connect() {
    if (this.open) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ type: "connect", url: this.url });
    });
  }

  send(request) {
    this.worker.postMessage({ type: "send", request });
  }

  cancel() {
    this.worker.postMessage({ type: "cancel" });
  }

  close() {
    this.worker.postMessage({ type: "close" });
    this.worker.terminate();
  }

  onWorkerMessage(message) {
    const h = this.handlers;
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
          this.pending.reject(new Error(`the worker refused the WebSocket at ${this.url} (or is down)`));
          this.pending = null;
        }
        h.onClosed?.(message);
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
      default:
        h.onProblem(`socket worker sent an unknown message kind ${message.type}`);
    }
  }
}
