"""Pure numpy audio helpers shared by engines, the scheduler, the WebSocket view and the benchmark.

The audible-onset rule lives here once: RMS of 20 ms windows with a 10 ms hop, DC removed per window,
at or above -45 dBFS for two consecutive windows, whose outer hops must be loud too (so a click shorter
than a hop never counts). The server trims leading silence with it and the benchmark measures audible
time-to-first-audio with it, so both sides agree on what "audible" means.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Iterable

import numpy as np

ONSET_THRESHOLD_DB = -45.0
ONSET_WINDOW_MS = 20.0
ONSET_HOP_MS = 10.0
ONSET_CONSECUTIVE = 2


def to_pcm16(samples: np.ndarray) -> np.ndarray:
    """float32 [-1, 1] → int16, clipped (no wrap-around clicks)."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return np.round(clipped * 32767.0).astype(np.int16)


def from_pcm16(pcm: np.ndarray | bytes) -> np.ndarray:
    data = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, bytes | bytearray | memoryview) else pcm
    return np.asarray(data, dtype=np.float32) / 32767.0


def wav_bytes(samples: np.ndarray, sample_rate: int) -> bytes:
    """A complete PCM 16-bit mono wav file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(to_pcm16(samples).tobytes())
    return buffer.getvalue()


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Decode a PCM wav (8/16/32-bit, any channel count) to mono float32 and its rate."""
    with wave.open(io.BytesIO(data), "rb") as source:
        channels, width, rate = source.getnchannels(), source.getsampwidth(), source.getframerate()
        frames = source.readframes(source.getnframes())
    if width == 2:
        samples = from_pcm16(np.frombuffer(frames, dtype="<i2"))  # exact inverse of to_pcm16
    elif width == 4:
        samples = np.frombuffer(frames, dtype="<i4").astype(np.float32) / 2147483648.0
    elif width == 1:
        samples = (np.frombuffer(frames, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    else:
        raise ValueError(f"unsupported wav sample width {width}")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return samples.astype(np.float32), rate


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
    hop = max(1, int(round(sample_rate * ONSET_HOP_MS / 1000.0)))
    windows = window_levels_db(samples, sample_rate) >= threshold_db
    hops = window_levels_db(samples, sample_rate, ONSET_HOP_MS, ONSET_HOP_MS) >= threshold_db
    if windows.size < consecutive:
        return None
    run = np.convolve(windows.astype(np.int32), np.ones(consecutive, dtype=np.int32), mode="valid")
    # window k spans hops k and k+1, so `consecutive` windows from k span hops k .. k+consecutive
    starts = np.flatnonzero(run == consecutive)
    starts = starts[starts + consecutive < hops.size]
    sustained = starts[hops[starts] & hops[starts + consecutive]]
    return int(sustained[0]) * hop if sustained.size else None


class LeadingSilenceTrimmer:
    """Streaming trim of silence before the audible onset, keeping at most `keep_ms` of it.

    Feed chunks; it holds audio back until the onset is known, then passes everything through. If the
    stream ends with no audible onset, `flush()` returns what was held (nothing is lost).
    """

    def __init__(self, sample_rate: int, keep_ms: float = 10.0) -> None:
        self.sample_rate = sample_rate
        self.keep = int(sample_rate * keep_ms / 1000.0)
        self._held: list[np.ndarray] = []
        self._found = False
        self.trimmed_samples = 0

    def feed(self, chunk: np.ndarray) -> np.ndarray:
        if self._found:
            return chunk
        self._held.append(np.asarray(chunk, dtype=np.float32))
        buffer = np.concatenate(self._held)
        onset = audible_onset(buffer, self.sample_rate)
        if onset is None:
            # Drop silence that can never be within `keep` of an onset, so the buffer stays bounded.
            window = int(self.sample_rate * ONSET_WINDOW_MS / 1000.0) * (ONSET_CONSECUTIVE + 2)
            excess = buffer.size - window - self.keep
            if excess > 0:
                self.trimmed_samples += excess
                buffer = buffer[excess:]
            self._held = [buffer]
            return np.zeros(0, dtype=np.float32)
        self._found = True
        self._held = []
        start = max(0, onset - self.keep)
        self.trimmed_samples += start
        return buffer[start:]

    def flush(self) -> np.ndarray:
        held = np.concatenate(self._held) if self._held else np.zeros(0, dtype=np.float32)
        self._held = []
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
