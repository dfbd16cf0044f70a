"""Pure numpy audio helpers shared by engines, the scheduler, the WebSocket view and the benchmark.

The audible-onset rule lives here once: RMS of 20 ms windows with a 10 ms hop, DC removed per window,
at or above -45 dBFS for two consecutive windows, whose outer hops must be loud too (so a click shorter
than a hop never counts). The server trims leading silence with it and the benchmark measures audible
time-to-first-audio with it, so both sides agree on what "audible" means.
"""

from __future__ import annotations

import contextlib
import io
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .decode_cost import HIGHEST_RATE, too_many_samples
from .wav_header import check_wav_header

ONSET_THRESHOLD_DB = -45.0
ONSET_WINDOW_MS = 20.0
ONSET_HOP_MS = 10.0
ONSET_CONSECUTIVE = 2
MONO_BLOCK_SAMPLES = 1 << 18  # samples (frames × channels) decoded at a time when averaging channels
# Sample rates of recorded speech, telephone to studio (a voice upload, a reference wav). Below, a few
# samples make a "voice" that resampling stretches into seconds of nothing (1 Hz: 10 samples, "10 s");
# above, a small compressed file decodes to hundreds of MB (a 170 KB FLAC at 655 kHz: 0.6 GB).
SPEECH_RATES = (8_000, HIGHEST_RATE)


def to_pcm16(samples: np.ndarray) -> np.ndarray:
    """float32 [-1, 1] → int16, clipped (no wrap-around clicks). Scaled and rounded in the clipped
    copy: one float buffer per call instead of three (each new buffer is pages to fault in)."""
    scaled = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
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
    np.clip(scaled, -_ONE, _ONE, out=scaled)
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


# libsndfile's words where they blame itself for the file's fault: a header whose sample rate is 0
# (or past 2^31) was "Internal error : SF_INFO struct incomplete.", which reads as the worker's bug.
LIBSNDFILE_WORDS = {
    "Internal error : SF_INFO struct incomplete.": (
        "its header gives no usable sample rate or format: a rate of 0 Hz, or over 2 147 483 647 Hz"
    ),
}


@contextlib.contextmanager
def open_sound(data: bytes) -> Iterator[Any]:
    """libsndfile over bytes in memory (a `soundfile.SoundFile`). What it cannot read, on opening or
    reading, is a ValueError in libsndfile's own words: its message names the buffer's Python object;
    a WAV header it would read as other audio is one in ours (`wav_header.py`)."""
    import soundfile

    check_wav_header(data)  # two headers libsndfile reads as other audio than they hold
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as source:
            yield source
    except soundfile.LibsndfileError as exc:
        raise ValueError(LIBSNDFILE_WORDS.get(exc.error_string, exc.error_string)) from None


UNKNOWN_FRAMES = (1 << 63) - 1  # libsndfile's frame count for a file that does not say its length


def declared_frames(source: Any) -> int:
    """An open sound's frame count as its header gives it; ValueError where it gives none (a FLAC
    written to a pipe): the count stood for 2^63 - 1 frames, refused as "5.8e14 s long", a number the
    caller never sent, and libsndfile cannot read such a FLAC block by block anyway."""
    if source.frames >= UNKNOWN_FRAMES:
        raise ValueError(
            f"the {source.format} file does not say how long it is (written to a pipe?); "
            "send one written to a file, which does"
        )
    return int(source.frames)


def read_wav(
    data: bytes,
    max_seconds: float | None = None,
    rates: tuple[int, int] | None = None,
    to_rate: int | None = None,
) -> tuple[np.ndarray, int]:
    """Decode a wav (8/16/24/32-bit PCM or float, any channel count) to mono float32 and its rate.

    libsndfile reads every sample format; 16-bit PCM is decoded with `from_pcm16`, the exact inverse
    of `to_pcm16`, so a wav this module wrote reads back sample for sample. Bytes it cannot read are a
    ValueError (`open_sound`), and so are audio longer than `max_seconds` or with more samples than
    `too_many_samples` allows for it (checked before decoding: a small file can decode to a huge
    buffer or cost seconds of CPU), a rate outside `rates` (also checked before decoding) and NaN or
    infinite samples (a float wav can hold them; they pass through every later step and come out as
    silence or noise).

    `to_rate`: resampled to it as it is decoded (`read_mono_at`), the same samples as `resample` on
    the whole read, without holding the whole at the file's own rate (30 s of 16-bit mono at 192 kHz,
    an 11.5 MB file, peaked at 69 MB to keep 2.9 MB at 24 kHz; 18.7 MB now, tracemalloc's peak, the
    file's bytes included); the answer's rate is then `to_rate`.
    """
    with open_sound(data) as source:
        rate = source.samplerate
        if rates is not None and not rates[0] <= rate <= rates[1]:
            raise ValueError(f"the sample rate is {rate} Hz; a voice needs {rates[0]}-{rates[1]} Hz")
        if max_seconds is not None and declared_frames(source) > max_seconds * rate:
            raise ValueError(
                f"the audio is {source.frames / rate:.1f} s long, the limit is {max_seconds:g} s"
            )
        if max_seconds is not None and (why := too_many_samples(source.channels, source.frames, max_seconds)):
            raise ValueError(why)  # a `ref_wav` of 64 channels: seconds of CPU in a 19 KB Ogg
        total = source.frames * source.channels
        if to_rate is not None and to_rate != rate:
            resampled = read_mono_at(source, to_rate, _wav_blocks(source))
            samples, bad, rate = resampled.samples, resampled.bad, to_rate
        elif source.subtype == "PCM_16" and source.channels == 1:
            samples, bad = from_pcm16(source.read(dtype="int16")), 0
        else:
            samples, bad = read_mono(source)
    if bad:
        raise ValueError(f"{bad} of {total} samples are not finite numbers (NaN or infinity)")
    return samples, rate


def _wav_blocks(source: Any) -> Iterator[tuple[np.ndarray, int]]:
    """`_mono_blocks`, but 16-bit mono decoded as `read_wav` decodes it whole (`from_pcm16`)."""
    if source.subtype != "PCM_16" or source.channels != 1:
        yield from _mono_blocks(source)
        return
    for block in _blocks(source, MONO_BLOCK_SAMPLES, "int16", always_2d=False):
        yield from_pcm16(block), 0


def read_mono(source: Any) -> tuple[np.ndarray, int]:
    """An open sound's samples as mono float32, its channels averaged a block at a time (only the mono
    samples are held whole: all 8 channels of a 1.9 MB FLAC at 192 kHz were 178 MB at once), and how
    many of its samples were not finite (NaN or infinity), counted before averaging."""
    mono = np.empty(_frames_left(source), dtype=np.float32)
    filled = bad = 0
    for block, block_bad in _mono_blocks(source):
        bad += block_bad
        mono[filled : filled + len(block)] = block
        filled += len(block)
    return mono[:filled], bad


@dataclass(frozen=True)
class MonoRead:
    """`read_mono_at`'s answer: the samples at the rate asked for, how many read were not finite, and
    the span (highest minus lowest) of the samples as read, before resampling (whose edges ring: a
    constant level resampled is no longer constant)."""

    samples: np.ndarray
    bad: int
    span: float


def read_mono_at(
    source: Any, to_rate: int, blocks: Iterator[tuple[np.ndarray, int]] | None = None
) -> MonoRead:
    """`read_mono`, resampled to `to_rate` as it is read (libsoxr's stream: the same samples as
    `resample` on the whole), so only the mono samples at `to_rate` are held (29 s at 192 kHz held
    25 MB to keep 5.6; 9.4 MB now, tracemalloc's peak). `blocks`: the source's mono blocks (default
    `_mono_blocks`) when resampling."""
    if to_rate == source.samplerate:
        samples, bad = read_mono(source)
        span = float(np.ptp(samples)) if samples.size else 0.0
        return MonoRead(samples, bad, span)
    import soxr

    stream = soxr.ResampleStream(source.samplerate, to_rate, 1, dtype="float32", quality="HQ")
    remaining = _frames_left(source)  # (blocks never read past it)
    out = np.empty(remaining * to_rate // source.samplerate + to_rate, dtype=np.float32)  # 1 s spare
    filled, bad, low, high = 0, 0, np.inf, -np.inf

    def keep(piece: np.ndarray) -> None:
        nonlocal out, filled
        if filled + piece.size > out.size:  # never seen: the spare second covers the filter's tail
            out = np.concatenate([out[:filled], np.empty(piece.size + to_rate, dtype=np.float32)])
        out[filled : filled + piece.size] = piece
        filled += piece.size

    for block, block_bad in blocks or _mono_blocks(source):
        bad += block_bad
        if block.size:
            low, high = min(low, float(block.min())), max(high, float(block.max()))
        keep(stream.resample_chunk(np.ascontiguousarray(block), last=False))
    keep(stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True))
    return MonoRead(out[:filled], bad, high - low if high >= low else 0.0)


def _frames_left(source: Any) -> int:
    """Frames not yet read. libsndfile reads GSM 6.10 in a WAV but cannot seek in it, and asking where
    it stands (`tell`) is a seek: such an upload was refused as "Seek attempted on unseekable file type."
    Unseekable, nothing of it has been read yet here."""
    return max(source.frames - source.tell(), 0) if source.seekable() else source.frames


def _mono_blocks(source: Any) -> Iterator[tuple[np.ndarray, int]]:
    """Each block of an open sound as mono float32, with how many of its samples were not finite."""
    frames = max(1, MONO_BLOCK_SAMPLES // source.channels)  # 255 channels (Ogg) × 65 536 frames: 67 MB
    for block in _blocks(source, frames, "float32", always_2d=True):
        bad = block.size - int(np.count_nonzero(np.isfinite(block)))
        yield (block[:, 0] if block.shape[1] == 1 else block.mean(axis=1)), bad


def _blocks(source: Any, frames: int, dtype: str, *, always_2d: bool) -> Iterator[np.ndarray]:
    """An open sound's frames not yet read, `frames` at a time, up to its first short read: soundfile's
    `blocks` gave a file cut short of its stated length (an MP3's) uninitialised memory for the rest."""
    left = _frames_left(source)
    while left > 0:
        block = source.read(min(frames, left), dtype=dtype, always_2d=always_2d)
        if len(block):
            yield block
        left = left - len(block) if len(block) == min(frames, left) else 0


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
    if max(1, int(round(sample_rate * ONSET_WINDOW_MS / 1000.0))) == 2 * hop and threshold_db > -200.0:
        windows, hops = _loud_windows_and_hops(samples, hop, threshold_db)
    else:
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
    sums = blocks.sum(axis=1)
    squares = np.einsum("ij,ij->i", blocks, blocks)
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
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
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
        chunk = np.asarray(chunk, dtype=np.float32).reshape(-1)
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
