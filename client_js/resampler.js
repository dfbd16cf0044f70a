/**
 * Streaming sample-rate conversion for PCM that arrives in chunks of any size.
 *
 * Cubic (Catmull-Rom) interpolation with its state carried across chunks: the output is the same
 * whether the stream came in one piece or in a thousand, so chunk borders never click. Good enough for
 * a speech preview (24 kHz → 44.1/48 kHz upsampling mostly); the worker's files use soxr, not this.
 */

export function s16leToFloat32(bytes) {
  // Browsers run little-endian, so an Int16Array view reads s16le directly.
  const pcm = new Int16Array(bytes, 0, bytes.byteLength >> 1);
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i] / 32768;
  return out;
}

export class StreamResampler {
  /** @param {number} fromRate source rate (Hz) @param {number} toRate output rate (Hz) */
  constructor(fromRate, toRate) {
    this.fromRate = fromRate;
    this.toRate = toRate;
    this.step = fromRate / toRate; // source samples per output sample
    this.passThrough = fromRate === toRate;
    // One sample of history before the stream (silence), so the first output needs no special case.
    this.tail = new Float32Array([0]);
    this.position = 1; // fractional read position in `tail ++ next input`
  }

  /** Resample the next piece of the stream; returns the output samples that are ready. */
  push(input) {
    if (this.passThrough) return input;
    const buffer = new Float32Array(this.tail.length + input.length);
    buffer.set(this.tail);
    buffer.set(input, this.tail.length);
    return this.run(buffer, buffer.length - 2);
  }

  /** The last samples held back for lookahead, padded with silence; the stream ends here. */
  flush() {
    if (this.passThrough) return new Float32Array(0);
    const buffer = new Float32Array(this.tail.length + 2);
    buffer.set(this.tail);
    const out = this.run(buffer, this.tail.length);
    this.tail = new Float32Array([0]);
    this.position = 1;
    return out;
  }

  /** Interpolate at every position below `limit` (it needs x[i-1]..x[i+2]), keep the rest as tail. */
  run(buffer, limit) {
    const count = Math.max(0, Math.ceil((limit - this.position) / this.step));
    const out = new Float32Array(count);
    for (let n = 0; n < count; n++) {
      const position = this.position + n * this.step; // not accumulated: no drift past `limit`
      const i = Math.floor(position);
      const t = position - i;
      const a = buffer[i - 1];
      const b = buffer[i];
      const c = buffer[i + 1];
      const d = i + 2 < buffer.length ? buffer[i + 2] : c; // rounding can reach one past `limit`
      out[n] = b + 0.5 * t * (c - a + t * (2 * a - 5 * b + 4 * c - d + t * (3 * (b - c) + d - a)));
    }
    const position = this.position + count * this.step;
    const keepFrom = Math.min(buffer.length, Math.max(0, Math.floor(position) - 1));
    this.tail = buffer.slice(keepFrom);
    this.position = position - keepFrom;
    return out;
  }
}
