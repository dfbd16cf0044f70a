/**
 * Playback on the page's side: owns the AudioContext and the worklet node, and turns the worklet's
 * reports into figures (buffer level, underruns, samples played, time to first audio).
 *
 * The PCM itself never passes through here: `sourcePort()` hands one end of a MessageChannel to the
 * socket worker, which posts decoded buffers straight to the worklet (transferred).
 */

// How long Pause waits for the worklet's fade-out (5 ms of sound, a few render quanta) before it
// suspends the context anyway.
const PAUSE_FADE_WAIT_MS = 250;

export class Player {
  /**
   * Create the context (call from a user gesture so autoplay rules allow sound) at `sampleRate`, the
   * stream's rate: the browser then converts to the device's rate, better than a script could.
   */
  static async create({ sampleRate } = {}) {
    if (typeof AudioWorkletNode === "undefined" || !window.isSecureContext) {
      throw new Error(
        "this browser context cannot run an AudioWorklet: open the page over http://localhost, " +
          "http://127.0.0.1 or https (a plain-http LAN address is not a secure context)",
      );
    }
    const context = new AudioContext({ latencyHint: "interactive", ...(sampleRate ? { sampleRate } : {}) });
    try {
      await context.audioWorklet.addModule(new URL("./pcm-player.worklet.js", import.meta.url));
      const node = new AudioWorkletNode(context, "pcm-player", { numberOfInputs: 0, outputChannelCount: [1] });
      node.connect(context.destination);
      return new Player(context, node);
    } catch (error) {
      // Closed, or each failed Play (the page's server gone, say) left one more audio thread running.
      await context.close();
      throw new Error(`the audio worklet could not be loaded (${error.message})`);
    }
  }

  constructor(context, node) {
    this.context = context;
    this.node = node;
    this.listeners = new Set();
    this.status = { bufferedFrames: 0, playedFrames: 0, playedSourceSamples: 0, underruns: 0, starvedFrames: 0 };
    node.port.onmessage = (event) => this.onReport(event.data);
    node.onprocessorerror = () => {
      console.error("npu-worker player: the audio worklet stopped with an error");
      this.onReport({ type: "processor-error" });
    };
  }

  get sampleRate() {
    return this.context.sampleRate;
  }

  /** A port for the socket worker; the worklet listens on the other end. */
  sourcePort() {
    const channel = new MessageChannel();
    this.node.port.postMessage({ type: "source", port: channel.port1 }, [channel.port1]);
    return channel.port2;
  }

  /** Reports: {type: "status"|"first-audible"|"section-playing"|"section-played"|"drained", ...}. */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Drop what the worklet holds for `request` (when no socket worker is left to say so in order). */
  flush(request) {
    this.node.port.postMessage({ type: "flush", request });
  }

  async resume() {
    this.wantPaused = false;
    this.node.port.postMessage({ type: "paused", paused: false });
    if (this.context.state !== "running") await this.context.resume();
  }

  async pause() {
    // Told first: a cancel while paused fades nothing (its fade would start the next Play with a click).
    // The worklet fades the sound out over 5 ms, then says `paused-quiet`: suspended at once, the sound
    // stopped mid-wave, a click each Pause.
    // Pauses that come while one waits share its wait (the second took the one waiter, and the first
    // waited out the 250 ms fallback); the fallback counts from the latest Pause (the first's, whose
    // `paused-quiet` a Resume called off, fired just after a later Pause: suspended mid-fade).
    this.wantPaused = true;
    this.quiet ??= new Promise((resolve) => {
      this.quietWaiter = resolve;
    }).then(() => {
      clearTimeout(this.quietFallback);
      this.quiet = this.quietWaiter = null;
    });
    clearTimeout(this.quietFallback); // (a context that renders nothing never says it: the fallback)
    this.quietFallback = setTimeout(this.quietWaiter, PAUSE_FADE_WAIT_MS);
    const quiet = this.quiet;
    this.node.port.postMessage({ type: "paused", paused: true });
    if (this.context.state !== "running") return;
    await quiet;
    if (this.wantPaused) await this.context.suspend(); // (not when Resume came during the fade)
  }

  get paused() {
    return this.context.state === "suspended";
  }

  onReport(report) {
    if (report.type === "paused-quiet") {
      this.quietWaiter?.();
      return;
    }
    if (report.type === "status") this.status = report;
    if (report.type === "first-audible") report.audibleAt = this.frameToPageTime(report.frame);
    for (const listener of this.listeners) listener(report);
  }

  /**
   * When output frame `frame` reaches the speakers, on this page's performance clock: the context's
   * output timestamp pairs a context time with the performance time it is heard, so the output
   * latency is included. Without a timestamp, the report's arrival plus the output latency.
   */
  frameToPageTime(frame) {
    const contextTime = frame / this.context.sampleRate;
    const stamp = this.context.getOutputTimestamp?.();
    if (stamp && stamp.performanceTime > 0) {
      return stamp.performanceTime + (contextTime - stamp.contextTime) * 1000;
    }
    const behind = (this.context.currentTime - contextTime) * 1000;
    return performance.now() - behind + (this.context.outputLatency || this.context.baseLatency || 0) * 1000;
  }

  bufferedMs() {
    return (1000 * this.status.bufferedFrames) / this.context.sampleRate;
  }

  async close() {
    await this.context.close();
  }
}
