"""Pure numpy audio helpers shared by engines, the scheduler, the WebSocket view and the benchmark.

The audible-onset rule lives here once: RMS of 20 ms windows with a 10 ms hop, DC removed per window,
at or above -45 dBFS for two consecutive windows, whose outer hops must be loud too (so a click shorter
than a hop never counts). The server trims leading silence with it and the benchmark measures audible
time-to-first-audio with it, so both sides agree on what "audible" means. Reading a caller's sound
bytes (libsndfile) is `audio_decode.py`.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Iterable, Sequence

import numpy as np

ONSET_THRESHOLD_DB = -45.0
ONSET_WINDOW_MS = 20.0
ONSET_HOP_MS = 10.0
ONSET_CONSECUTIVE = 2
# The run kernel of the default rule, made once: `np.ones` was four Python calls a preview's onset search.
# A run of ones reads the same reversed: `correlate` takes it as `np.convolve`'s reversed kernel as it is
# (a reversed view was copied to a contiguous one at each call).
_RUN_OF_ONSET = np.ones(ONSET_CONSECUTIVE, dtype=np.int32)
_RUN_OF_ONSET.flags.writeable = False
# The C functions behind `np.einsum` (no `optimize`: it calls `c_einsum` with the same operands) and
# `np.convolve` (`correlate` of the longer array with the shorter reversed; mode 0 is "valid"): their
# wrappers' dispatch was 15 Python calls a preview's onset search (benchmarks/SERVER_OVERHEAD.md, stop 57).
try:
    from numpy._core.multiarray import c_einsum as _c_einsum  # type: ignore[attr-defined]
    from numpy._core.multiarray import correlate as _correlate  # type: ignore[attr-defined]
except ImportError:
    try:  # numpy 1.26
        from numpy.core.multiarray import c_einsum as _c_einsum  # type: ignore[attr-defined,no-redef]
        from numpy.core.multiarray import correlate as _correlate  # type: ignore[attr-defined,no-redef]
    except ImportError:  # a numpy that moved them (private, and `numpy>=1.26` has no bound): the wrappers
        _c_einsum = np.einsum  # (the same sums; an import error here stopped the whole worker's start)

        def _correlate(a: np.ndarray, v: np.ndarray, mode: int) -> np.ndarray:  # type: ignore[no-redef]  # (mode 0: "valid")
            return np.convolve(a, v[::-1], mode="valid")


def clip_by_extremes(
    samples: np.ndarray, low: np.float32, high: np.float32, out: np.ndarray | None = None
) -> np.ndarray:
    """What the `clip` ufunc makes (NaN stays NaN), by the `maximum` and `minimum` ufuncs: two passes
    over the samples where `clip` takes one; only for a numpy without that ufunc where we look for it."""
    clipped = np.maximum(samples, low, out=out)
    return np.minimum(clipped, high, out=clipped)


# The `clip` ufunc itself, which `np.clip` reaches through five Python calls of dispatch: one pass over a
# chunk. `maximum` then `minimum` with a scalar bound took the NaN-propagating loop twice: 24 % of the
# engine lane's CPU a `/ws` preview was numpy's, a third of it those two (benchmarks/SERVER_OVERHEAD.md,
# 2026-12-08, stop 64). The same values byte for byte (`tests/test_lane_chunk_work.py`).
def _clip_ufunc() -> Callable[..., np.ndarray]:
    """numpy's `clip` ufunc where its private module holds it (numpy 2, then 1.26), else the two passes:
    a numpy that moved it gets the same values."""
    try:
        from numpy._core.umath import clip  # type: ignore[attr-defined]
    except ImportError:
        try:  # numpy 1.26
            from numpy.core.umath import clip  # type: ignore[attr-defined,no-redef]
        except ImportError:
            return clip_by_extremes
    return clip  # type: ignore[no-any-return]


clip_samples = _clip_ufunc()


def to_pcm16(samples: np.ndarray) -> np.ndarray:
    """float32 [-1, 1] → int16, clipped (no wrap-around clicks). Scaled and rounded in the clipped
    copy: one float buffer per call instead of three (each new buffer is pages to fault in). Clipped
    by the `clip` ufunc (`clip_samples`), the same values as `np.clip` (NaN stays NaN), without its
    five Python calls of dispatch: this runs on the engine lane for every chunk of a `/ws` preview,
    whose chunks are float32 arrays already (no `asarray` then)."""
    if samples.__class__ is not np.ndarray or samples.dtype != np.float32:
        samples = np.asarray(samples, dtype=np.float32)
    scaled = clip_samples(samples, _MINUS_ONE, _ONE)
    scaled *= 32767.0
    return np.rint(scaled, out=scaled).astype(np.int16)


def from_pcm16(pcm: np.ndarray | bytes) -> np.ndarray:
    data = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, bytes | bytearray | memoryview) else pcm
    return np.asarray(data, dtype=np.float32) / 32767.0


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """A complete PCM 16-bit mono wav file."""
    return wav_of_chunks([np.asarray(samples, dtype=np.float32).reshape(-1)], sample_rate)


# The 44-byte header of a PCM wav as the `wave` module writes it: RIFF size, "fmt " chunk of 16 bytes
# (format 1, channels, rate, bytes a second, block align, bits a sample), then the "data" chunk's size.
WAV_HEADER = struct.Struct("<4sI4s4sIHHIIHH4sI")
_ONE = np.float32(1.0)
_MINUS_ONE = np.float32(-1.0)
_FULL_SCALE = np.float32(32767.0)


def wav_of_chunks(chunks: Sequence[np.ndarray], sample_rate: int) -> bytes:
    """A complete PCM 16-bit mono wav of the chunks (1-D float32) in order: the bytes `wave` writes
    for `to_pcm16` of them joined. Why not `wave`: the audio was copied into six new buffers on the
    way (joined, clipped, cast, `tobytes`, `wave`'s buffer, its `getvalue`), part of a batch section's
    end beside the next section's synthesis; here one float buffer is joined, clipped, scaled and
    rounded in place, cast once to int16, and joined once with the header into the bytes returned."""
    if not 0 < sample_rate < 1 << 31:  # `wave` refused a rate <= 0; the header holds rate * 2 in 32 bits
        raise ValueError(f"a wav's sample rate is 1-2147483647 Hz, not {sample_rate}")
    scaled = np.concatenate(chunks, dtype=np.float32) if chunks else np.zeros(0, np.float32)
    clip_samples(scaled, _MINUS_ONE, _ONE, out=scaled)
    np.multiply(scaled, _FULL_SCALE, out=scaled)
    np.rint(scaled, out=scaled)
    return pcm16_wav(scaled.astype("<i2"), sample_rate)


def pcm16_wav(pcm: np.ndarray, sample_rate: int) -> bytes:
    """A complete PCM 16-bit mono wav of int16 samples, as they are."""
    pcm = np.ascontiguousarray(pcm, dtype="<i2")
    size = pcm.nbytes
    header = WAV_HEADER.pack(
        b"RIFF", 36 + size, b"WAVE", b"fmt ", 16, 1, 1, sample_rate, 2 * sample_rate, 2, 16, b"data", size
    )
    return b"".join((header, pcm.data))


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """High-quality resampling (libsoxr); identity when the rates agree."""
    if from_rate == to_rate or samples.size == 0:
        return np.asarray(samples, dtype=np.float32)
    import soxr

    return soxr.resample(np.asarray(samples, dtype=np.float32), from_rate, to_rate, quality="HQ")


def window_levels_db(
    samples: np.ndarray, sample_rate: int, window_ms: float = ONSET_WINDOW_MS, hop_ms: float = ONSET_HOP_MS
) -> np.ndarray:
    """RMS level (dBFS) of each DC-removed window; window k starts at k·hop."""
    window = max(1, int(round(sample_rate * window_ms / 1000.0)))
    hop = max(1, int(round(sample_rate * hop_ms / 1000.0)))
    samples = np.asarray(samples, dtype=np.float64)
    if samples.size < window:
        return np.zeros(0)
    frames = np.lib.stride_tricks.sliding_window_view(samples, window)[::hop]
    centred = frames - frames.mean(axis=1, keepdims=True)
    rms = np.sqrt(np.mean(centred * centred, axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-10))


def audible_onset(
    samples: np.ndarray,
    sample_rate: int,
    threshold_db: float = ONSET_THRESHOLD_DB,
    consecutive: int = ONSET_CONSECUTIVE,
) -> int | None:
    """Sample index (a multiple of the hop) where sustained audible sound starts, or None.

    Windows k .. k+consecutive-1 must be loud, and so must the hops they do not share with their
    neighbours (the first hop of the first window and the last hop of the last): with half-overlapping
    windows every sample lies in two of them, so without that a single loud sample would count.
    """
    hop, two_hops = _onset_hop(sample_rate)
    if two_hops and threshold_db > -200.0:
        windows, hops = _loud_windows_and_hops(samples, hop, threshold_db)
    else:
        windows = window_levels_db(samples, sample_rate) >= threshold_db
        hops = window_levels_db(samples, sample_rate, ONSET_HOP_MS, ONSET_HOP_MS) >= threshold_db
    if windows.size < consecutive:
        return None
    if consecutive == ONSET_CONSECUTIVE:  # (windows.size >= 2: the longer, as `np.convolve` orders them)
        run = _correlate(windows.astype(np.int32), _RUN_OF_ONSET, 0)  # type: ignore[call-overload]
    else:
        run = np.convolve(windows.astype(np.int32), np.ones(consecutive, dtype=np.int32), mode="valid")
    # window k spans hops k and k+1, so `consecutive` windows from k span hops k .. k+consecutive
    starts = (run == consecutive).nonzero()[0]  # (`np.flatnonzero` of a 1-D array, ≈ 10 calls less)
    starts = starts[starts + consecutive < hops.size]
    sustained = starts[hops[starts] & hops[starts + consecutive]]
    return int(sustained[0]) * hop if sustained.size else None


@functools.lru_cache(maxsize=8)
def _onset_hop(sample_rate: int) -> tuple[int, bool]:
    """The onset hop in samples at `sample_rate`, and whether a window is two of them (the rule's
    quick case); worked out once a rate, not with four calls of `max` and `round` each search."""
    hop = max(1, int(round(sample_rate * ONSET_HOP_MS / 1000.0)))
    return hop, max(1, int(round(sample_rate * ONSET_WINDOW_MS / 1000.0))) == 2 * hop


def _loud_windows_and_hops(
    samples: np.ndarray, hop: int, threshold_db: float
) -> tuple[np.ndarray, np.ndarray]:
    """`window_levels_db(...) >= threshold_db` of the windows and of the hops, where a window is two
    hops (24 kHz: 480 and 240 samples): each hop's sum and sum of squares once, a window's from its
    two hops', its DC-removed power as mean square less squared mean. The same rule with a few numpy
    calls in place of two passes of sliding windows, logarithms and all: `OnsetWatch.feed` on a
    preview's first chunk (0.19 s) ≈ 105 → 33 µs of the engine thread, under the GIL beside the event
    loop (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 49)."""
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    count = x.size // hop
    if count < 2:  # shorter than one window
        return np.zeros(0, dtype=bool), np.zeros(count, dtype=bool)
    blocks = x[: count * hop].reshape(count, hop)
    sums = np.add.reduce(blocks, 1)  # (`blocks.sum(axis=1)` without its two Python calls)
    squares = _c_einsum("ij,ij->i", blocks, blocks)  # (`np.einsum`'s, without its dispatch)
    loud = 10.0 ** (threshold_db / 10.0)  # the level as a power (above -200 dB: the floor's never counts)
    hops = squares / hop - (sums / hop) ** 2 >= loud
    pairs, pair_squares = sums[:-1] + sums[1:], squares[:-1] + squares[1:]
    windows = pair_squares / (2 * hop) - (pairs / (2 * hop)) ** 2 >= loud
    return windows, hops


class OnsetWatch:
    """Finds the audible onset (the rule of `audible_onset`) of a stream fed chunk by chunk.

    The rule needs some audio after the onset before it can say "audible", so the onset is usually
    known one chunk or so after the chunk that carries it; `feed` then returns its position counted
    from the start of the stream, once. Only a tail of the stream is kept, aligned to the onset hop, so
    a long silent stream costs constant memory and constant work per chunk.
    """

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.hop = max(1, int(round(sample_rate * ONSET_HOP_MS / 1000.0)))
        window = max(1, int(round(sample_rate * ONSET_WINDOW_MS / 1000.0)))
        # Enough for every window that could still begin a run of loud windows.
        self._keep = (ONSET_CONSECUTIVE + 1) * window + self.hop
        self._tail = np.zeros(0, dtype=np.float32)
        self.dropped = 0  # stream samples no longer held (the onset cannot lie before this)
        self.fed = 0  # stream samples seen
        self.onset: int | None = None

    def feed(self, samples: np.ndarray) -> int | None:
        """The onset's position in the stream, returned by the one feed after which it is known."""
        if samples.__class__ is not np.ndarray or samples.dtype != np.float32 or samples.ndim != 1:
            samples = np.asarray(samples, dtype=np.float32).reshape(-1)  # (an engine's chunk is already)
        self.fed += samples.size
        if self.onset is not None:
            return None
        buffer = np.concatenate([self._tail, samples]) if self._tail.size else samples
        onset = audible_onset(buffer, self.sample_rate)
        if onset is not None:
            self.onset = self.dropped + onset
            self._tail = np.zeros(0, dtype=np.float32)
            return self.onset
        # Windows start at multiples of the hop from the buffer start: drop whole hops only.
        drop = max(0, ((buffer.size - self._keep) // self.hop) * self.hop)
        self._tail = buffer[drop:]
        self.dropped += drop
        return None


class LeadingSilenceTrimmer:
    """Streaming trim of silence before the audible onset, keeping at most `keep_ms` of it.

    Feed chunks; it holds audio back until the onset is known, then passes everything through. If the
    stream ends with no audible onset, `flush()` returns what was held (nothing is lost). The onset is
    found by an `OnsetWatch` (pass the stream's own to share it); once known, `onset_in_output` says
    where it lies in the first chunk `feed` returned.
    """

    def __init__(self, sample_rate: int, keep_ms: float = 10.0, watch: OnsetWatch | None = None) -> None:
        self.sample_rate = sample_rate
        self.keep = int(sample_rate * keep_ms / 1000.0)
        self.watch = watch if watch is not None else OnsetWatch(sample_rate)
        self._held = np.zeros(0, dtype=np.float32)
        self._held_start = self.watch.fed  # stream position of the first held sample
        self._found = False
        self.trimmed_samples = 0
        self.onset_in_output: int | None = None

    def feed(self, chunk: np.ndarray) -> np.ndarray:
        if self._found:
            return chunk
        if chunk.__class__ is not np.ndarray or chunk.dtype != np.float32 or chunk.ndim != 1:
            chunk = np.asarray(chunk, dtype=np.float32).reshape(-1)  # (an engine's chunk is already)
        self._held = np.concatenate([self._held, chunk]) if self._held.size else chunk
        onset = self.watch.feed(chunk)
        if onset is None:
            # Keep only what could still lie within `keep` of an onset the watch may yet report.
            drop = self.watch.dropped - self.keep - self._held_start
            if drop > 0:
                self._held = self._held[drop:]
                self._held_start += drop
                self.trimmed_samples += drop
            return np.zeros(0, dtype=np.float32)
        self._found = True
        start = max(self._held_start, onset - self.keep)
        out = self._held[start - self._held_start :]
        self.trimmed_samples += start - self._held_start
        self.onset_in_output = onset - start
        self._held = np.zeros(0, dtype=np.float32)
        return out

    def flush(self) -> np.ndarray:
        held = self._held
        self._held = np.zeros(0, dtype=np.float32)
        self._found = True
        return held


def crossfade_join(parts: Iterable[np.ndarray], sample_rate: int, fade_ms: float = 100.0) -> np.ndarray:
    """Join segments with an equal-power cross-fade of up to `fade_ms` (shorter for short parts)."""
    result = np.zeros(0, dtype=np.float32)
    for part in parts:
        part = np.asarray(part, dtype=np.float32)
        fade = min(int(sample_rate * fade_ms / 1000.0), result.size, part.size)
        if fade == 0:
            result = np.concatenate([result, part])
            continue
        ramp = np.linspace(0.0, np.pi / 2, fade, dtype=np.float32)
        mixed = result[-fade:] * np.cos(ramp) + part[:fade] * np.sin(ramp)
        result = np.concatenate([result[:-fade], mixed, part[fade:]])
    return result
