/**
 * The audio thread's side of the player: a FIFO ring of transferred Float32 chunks played back to back.
 *
 * PCM arrives already decoded, at the context's rate, from the socket worker, over a
 * MessagePort of its own (the `source` port), with the buffers transferred, not copied: this thread only
 * reads them. Markers travel on the same port as the audio, so their order with the samples is exact:
 *   {type: "begin", request}            a new request starts: counters for TTFA/underruns reset
 *   {type: "section", request, idx}     the next chunks belong to section idx
 *   {type: "pcm", request, data, length, sourceSamples}
 *   {type: "section-end", request, idx} all of section idx has been queued
 *   {type: "end", request}              the request sent its last audio: running dry now is not an underrun
 *   {type: "flush", request}            cancel: drop everything queued for the request (the sound
 *                                       fades out over FADE_SECONDS: cut mid-wave, it clicked)
 * Past MAX_BUFFERED_SECONDS queued, further audio is dropped and `overflow` reported (the page cancels).
 * Running dry while the request still has audio to come is a rebuffer, not a gap: the last FADE_SECONDS
 * still queued fade out, play-out waits (`buffering` in the status) until REBUFFER_SECONDS are queued or
 * the request's end is, then fades back in (it played silence mid-wave, a click, then each chunk as it
 * came: a garble of clicks and short gaps). A pause fades out before the page suspends the context
 * (`{type: "paused"}` on the node's port; `paused-quiet` once the fade has played) and Resume fades in.
 * Reports go to the main thread on the node's own port: `first-audible` (the output frame of the first
 * audible sample of the request), `section-playing`, `section-played`, `drained`, `overflow` and a periodic
 * `status`.
 */

const AUDIBLE = 0.0056; // -45 dBFS: the audible-onset level the server's TTFA uses
const STATUS_EVERY_QUANTA = 16; // ~43 ms at 48 kHz
// Audio held ahead of playback, at most: a fast engine (or a hostile worker) sends faster than real
// time, and without a bound a long lecture's float32 filled the tab's memory until it crashed.
const MAX_BUFFERED_SECONDS = 30 * 60;
// A cancel's fade-out: the output stepped from mid-wave to silence in one sample, an audible click.
const FADE_SECONDS = 0.005;
// Queued audio that ends a rebuffer: enough to ride out a chunk arriving late again.
const REBUFFER_SECONDS = 0.25;

class PcmPlayerProcessor extends AudioWorkletProcessor {
  constructor() {
    super();
    this.queue = []; // ring of entries {kind: "pcm"|"mark", ...}; `head` is the next one to play
    this.head = 0;
    this.offset = 0; // frames of queue[head] already played
    this.bufferedFrames = 0;
    this.request = null;
    this.resetCounters();
    this.quanta = 0;
    this.quantaAtPcm = -1; // `quanta` when the last chunk came
    this.paused = false;
    this.fading = new Float32Array(0); // the flushed audio's first frames, faded to silence, still to play
    this.fadeFrames = Math.round(FADE_SECONDS * sampleRate);
    this.rampIn = 0; // frames still to fade in after a rebuffer or a pause
    this.quietPending = false; // a pause whose fade-out is still to play: `paused-quiet` when it has
    this.port.onmessage = (event) => this.onControl(event.data);
  }

  resetCounters() {
    this.playedFrames = 0;
    this.playedSourceSamples = 0;
    this.underruns = 0;
    this.starvedFrames = 0;
    this.started = false; // the request's first chunk has been played
    this.ended = false; // no more audio will come for the request
    this.starved = false;
    this.heardFirst = false;
    this.playingIdx = null;
    this.announceIdx = null;
    this.overflowed = false; // audio past MAX_BUFFERED_SECONDS came: the rest of the request is dropped
    this.endQueued = false; // the request's `end` is queued: what is left plays out, no rebuffer
    this.buffering = false; // ran dry with audio still to come: waiting for REBUFFER_SECONDS queued
  }

  onControl(message) {
    if (message.type === "source") {
      message.port.onmessage = (event) => this.onSource(event.data);
    } else if (message.type === "paused") {
      this.setPaused(message.paused);
    } else if (message.type === "flush") {
      this.onSource(message); // the page stops play-out after its socket closed
    }
  }

  onSource(message) {
    switch (message.type) {
      case "begin":
        this.dropQueue();
        this.fading = new Float32Array(0); // the old request's last 5 ms, long played: never mixed in
        this.request = message.request;
        this.resetCounters();
        this.rampIn = 0; // (a Resume's fade-in is not the new request's)
        break;
      case "flush":
        if (message.request === this.request) {
          // (Waiting to rebuffer, nothing sounds but that wait's own fade-out, still played: a fade of
          // the audio queued meanwhile started from its full gain after the silence, a click.)
          if (this.started && !this.paused && !this.buffering) this.fading = this.fadeOfQueued();
          this.dropQueue();
          this.ended = true;
          this.buffering = false;
          this.playingIdx = null;
          this.announceIdx = null;
          this.report();
        }
        break;
      case "pcm":
        if (message.request !== this.request || this.overflowed) return;
        if (this.bufferedFrames + message.length > MAX_BUFFERED_SECONDS * sampleRate) {
          this.overflowed = true;
          this.port.postMessage({ type: "overflow", request: this.request, seconds: MAX_BUFFERED_SECONDS });
          return;
        }
        this.queue.push({
          kind: "pcm",
          data: new Float32Array(message.data, 0, message.length),
          sourceSamples: message.sourceSamples,
        });
        this.bufferedFrames += message.length;
        // No quantum rendered since the last chunk (the context is paused): process() sends no status,
        // so report here, or the Buffer figure stands at its value from before the pause.
        if (this.quanta === this.quantaAtPcm) this.report();
        this.quantaAtPcm = this.quanta;
        break;
      case "section":
      case "section-end":
      case "end":
        if (message.request !== this.request) return;
        if (message.type === "end") this.endQueued = true;
        this.queue.push({ kind: "mark", mark: message.type, idx: message.idx });
        break;
      default:
        this.port.postMessage({ type: "unknown-message", kind: String(message.type) });
    }
  }

  /**
   * Pause: the next FADE_SECONDS fade out (played by `process`), then silence with the playhead held;
   * `paused-quiet` tells the page it may suspend the context. Resume: the first frames fade in.
   */
  setPaused(paused) {
    if (paused === this.paused) return;
    this.paused = paused;
    if (paused) {
      this.quietPending = true;
      // A Pause while a fade still plays (a Resume came within it) lets that fade go on to silence.
      const fadeOut = this.fading.length === 0 && this.started && !this.ended && !this.buffering;
      if (fadeOut) this.fading = this.fadeOfQueued(true);
    } else {
      // What is left of the pause's fade still plays (it was dropped: its frames lost, and the sound
      // stepped from mid-fade to the fade-in's silence, a click), then the sound fades back in.
      this.quietPending = false;
      this.rampIn = this.fadeFrames;
    }
  }

  dropQueue() {
    this.queue = [];
    this.head = 0;
    this.offset = 0;
    this.bufferedFrames = 0;
  }

  /**
   * The next FADE_SECONDS of queued audio (less if less is queued), its gain falling to 0; `consume`:
   * taken from the queue (a pause, a rebuffer: play goes on after it), else a copy (a cancel drops all).
   */
  fadeOfQueued(consume = false) {
    // From the gain a fade-in still playing has reached (a Pause just after a Resume): from full gain it
    // stepped up from that fade-in's last frame (a click). The fade-out ends that fade-in.
    const from = 1 - this.rampIn / this.fadeFrames;
    if (consume) {
      const tail = new Float32Array(Math.min(this.fadeFrames, Math.max(0, this.bufferedFrames)));
      const taken = this.fill(tail);
      for (let i = 0; i < taken; i++) tail[i] *= from * (1 - (i + 1) / taken);
      this.rampIn = 0;
      return tail.subarray(0, taken);
    }
    const tail = new Float32Array(Math.round(FADE_SECONDS * sampleRate));
    let taken = 0;
    for (let i = this.head, offset = this.offset; i < this.queue.length && taken < tail.length; i++, offset = 0) {
      const entry = this.queue[i];
      if (entry.kind !== "pcm") continue;
      const piece = entry.data.subarray(offset, offset + tail.length - taken);
      tail.set(piece, taken);
      taken += piece.length;
    }
    for (let i = 0; i < taken; i++) tail[i] *= from * (1 - (i + 1) / taken);
    return tail.subarray(0, taken);
  }

  /** Play what is left of a fade-out (a cancel's, a pause's, a rebuffer's) into `out`; returns the frames written. */
  playFading(out) {
    if (this.fading.length === 0) return 0; // the usual case: no view made on the audio thread
    const take = Math.min(this.fading.length, out.length);
    out.set(this.fading.subarray(0, take));
    this.fading = this.fading.subarray(take);
    return take;
  }

  /** Handle the markers at the front of the queue, so that the next entry (if any) is audio. */
  takeMarks() {
    while (this.head < this.queue.length && this.queue[this.head].kind === "mark") {
      const { mark, idx } = this.queue[this.head++];
      if (mark === "section") {
        this.announceIdx = idx; // said when its first sample is played, not before
      } else if (mark === "section-end") {
        this.port.postMessage({ type: "section-played", request: this.request, idx });
        if (this.playingIdx === idx) this.playingIdx = null;
        if (this.announceIdx === idx) this.announceIdx = null; // a section without samples
      } else if (mark === "end") {
        this.ended = true;
        this.port.postMessage({
          type: "drained",
          request: this.request,
          playedFrames: this.playedFrames,
          playedSourceSamples: this.playedSourceSamples,
          bufferedFrames: this.bufferedFrames,
        });
      }
    }
    if (this.head > 64 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head); // compact the ring now and then
      this.head = 0;
    }
  }

  /** Copy queued audio into `out`; returns the number of frames written. */
  fill(out) {
    let written = 0;
    while (written < out.length) {
      this.takeMarks();
      if (this.head >= this.queue.length) break;
      const entry = this.queue[this.head];
      const take = Math.min(entry.data.length - this.offset, out.length - written);
      const piece = entry.data.subarray(this.offset, this.offset + take);
      if (this.announceIdx !== null && take > 0) this.announcePlaying();
      if (!this.heardFirst) this.findFirstAudible(piece, written);
      out.set(piece, written);
      written += take;
      this.playedFrames += take; // counted here, so a `drained` report sent mid-quantum is exact
      this.bufferedFrames -= take;
      this.offset += take;
      if (this.offset >= entry.data.length) {
        this.playedSourceSamples += entry.sourceSamples;
        this.head++;
        this.offset = 0;
      }
    }
    this.takeMarks();
    return written;
  }

  announcePlaying() {
    this.playingIdx = this.announceIdx;
    this.announceIdx = null;
    this.port.postMessage({ type: "section-playing", request: this.request, idx: this.playingIdx });
  }

  findFirstAudible(piece, position) {
    for (let i = 0; i < piece.length; i++) {
      if (Math.abs(piece[i]) >= AUDIBLE) {
        this.heardFirst = true;
        this.port.postMessage({ type: "first-audible", request: this.request, frame: currentFrame + position + i });
        return;
      }
    }
  }

  process(inputs, outputs) {
    const channels = outputs[0];
    const out = channels[0];
    const faded = this.playFading(out);
    let written = faded;
    if (this.paused) {
      out.fill(0, faded); // the playhead held: nothing is taken from the queue
      if (this.quietPending && this.fading.length === 0) {
        this.quietPending = false;
        this.port.postMessage({ type: "paused-quiet", request: this.request });
      }
    } else {
      written += this.playOn(out.subarray(faded));
    }
    if (written > 0) this.started = true;
    if (written < out.length && !this.paused) {
      out.fill(0, written);
      if (this.started && !this.ended) {
        this.starvedFrames += out.length - written;
        if (!this.starved) this.underruns++;
        this.starved = true;
      }
    } else if (!this.paused) {
      this.starved = false;
    }
    for (let c = 1; c < channels.length; c++) channels[c].set(out);
    if (++this.quanta % STATUS_EVERY_QUANTA === 0) this.report();
    return true;
  }

  /**
   * Fill `out` from the queue, rebuffering where it would run dry before the request's end: returns the
   * frames of sound written (a fade-out's included), the rest of `out` being the caller's silence.
   */
  playOn(out) {
    if (this.buffering) {
      if (this.bufferedFrames < REBUFFER_SECONDS * sampleRate && !this.endQueued) return 0;
      this.buffering = false; // enough is queued, or all there is: play on, fading in
      this.rampIn = this.fadeFrames;
      this.report();
    }
    const dryBeforeEnd = this.started && !this.endQueued && this.bufferedFrames < out.length + this.fadeFrames;
    if (dryBeforeEnd && !this.ended) {
      // Its last FADE_SECONDS fade out, played as a pause's are, over as many quanta as they take (240
      // frames at 48 kHz, more than a quantum's 128: set into `out` whole, a RangeError stopped the
      // worklet for good); then wait for more.
      this.fading = this.fadeOfQueued(true);
      this.buffering = true;
      this.report();
      return this.playFading(out);
    }
    const written = this.fill(out);
    if (this.rampIn > 0) {
      const ramp = Math.min(this.rampIn, written);
      for (let i = 0; i < ramp; i++) out[i] *= (this.fadeFrames - this.rampIn + i + 1) / this.fadeFrames;
      this.rampIn -= ramp;
    }
    return written;
  }

  report() {
    this.port.postMessage({
      type: "status",
      request: this.request,
      bufferedFrames: this.bufferedFrames,
      playedFrames: this.playedFrames,
      playedSourceSamples: this.playedSourceSamples,
      underruns: this.underruns,
      starvedFrames: this.starvedFrames,
      playingIdx: this.playingIdx,
      buffering: this.buffering,
      frame: currentFrame,
    });
  }
}

registerProcessor("pcm-player", PcmPlayerProcessor);
