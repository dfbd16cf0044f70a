"""Sound bytes a caller sent (a voice upload, a `ref_wav`, an inline `ref_audio`) decoded to mono float32.

Apart from `audio.py` because it is the one part that reads hostile bytes through a C library
(libsndfile): every bound (length, rate, channels × frames) is checked from the header before
decoding, and libsndfile's failures become a `ValueError` in words a caller can act on. The rest of
the audio helpers only ever see samples the worker made or already decoded.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .audio import from_pcm16
from .decode_cost import HIGHEST_RATE, too_many_samples
from .wav_header import check_wav_header

MONO_BLOCK_SAMPLES = 1 << 18  # samples (frames × channels) decoded at a time when averaging channels
# Sample rates of recorded speech, telephone to studio (a voice upload, a reference wav). Below, a few
# samples make a "voice" that resampling stretches into seconds of nothing (1 Hz: 10 samples, "10 s");
# above, a small compressed file decodes to hundreds of MB (a 170 KB FLAC at 655 kHz: 0.6 GB).
SPEECH_RATES = (8_000, HIGHEST_RATE)

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
    of `to_pcm16`, so a wav `audio.py` wrote reads back sample for sample. Bytes it cannot read are a
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
        said = "is not a finite number" if bad == 1 else "are not finite numbers"  # (1 of 12000 samples is)
        raise ValueError(f"{bad} of {total} samples {said} (NaN or infinity)")
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
