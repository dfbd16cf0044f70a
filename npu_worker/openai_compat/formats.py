"""Response formats of the speech API: wav, pcm, flac, mp3 and opus, encoded with libsndfile.

Which compressed formats work depends on the libsndfile inside the installed `soundfile` (mp3 needs
libsndfile >= 1.1, opus an Ogg/Opus build), and which sample rates they take depends on the codec (opus
only 8/12/16/24/48 kHz, mp3 up to 48 kHz), so `available_formats(rate)` encodes a short tone at that
rate in each and keeps those that come back decodable. Pure code, no aiohttp.

Streaming: wav (with the unknown-length header streams use) and pcm are written as the audio comes;
opus pages are written once and never revisited, so its bytes also go out as they are made. A streamed
mp3 is constant-bitrate: libsndfile fills its first frame (the Info frame of the length and the encoder's
delay) only when the file closes, which a VBR stream needs to be read whole (libsndfile read 1 s of 5)
and a CBR stream does not (libsndfile and ffmpeg read every frame). That first frame, still blank when
streamed, is not sent (`_BlankFrameDrop`): every decoder played it as a frame of silence, 24 ms at 24 kHz
before the audio; the encoder's own delay (1 105 samples at 24 kHz, 46 ms: lame's 576 and the decoder's
529), which only the filled frame tells a decoder to skip, is still heard. A whole mp3 (a batch item, a stream socket's sentence) stays VBR, read to the sample.
flac's header is rewritten at the close, so a flac is sent whole at the end.
"""

from __future__ import annotations

import asyncio
import functools
import io
import struct
from dataclasses import dataclass

import numpy as np
import soundfile

from ..audio import to_pcm16
from ..protocol import UnsupportedFormat

UNKNOWN_LENGTH = 0xFFFFFFFF
DEFAULT_FORMAT_FALLBACK = "wav"  # where libsndfile cannot make mp3 (OpenAI's default)
PROBE_RATE = 24000  # the rate formats are probed at before an engine says its own


@dataclass(frozen=True)
class AudioFormat:
    name: str
    content_type: str
    container: str | None = None  # libsndfile major format; None for our own wav/pcm writers
    subtype: str | None = None
    streams: bool = True  # bytes can go out as they are made
    # libsndfile's `bitrate_mode` and `compression_level` (0 best .. 1 smallest) of a streamed file
    stream_bitrate_mode: str | None = None
    stream_compression_level: float | None = None


FORMATS: dict[str, AudioFormat] = {
    f.name: f
    for f in (
        AudioFormat("wav", "audio/wav"),
        AudioFormat("pcm", "audio/pcm"),
        AudioFormat("flac", "audio/flac", "FLAC", "PCM_16", streams=False),
        AudioFormat(
            "mp3",
            "audio/mpeg",
            "MP3",
            "MPEG_LAYER_III",
            stream_bitrate_mode="CONSTANT",
            stream_compression_level=0.5,
        ),
        AudioFormat("opus", "audio/ogg", "OGG", "OPUS"),
    )
}


@functools.cache
def available_formats(sample_rate: int = PROBE_RATE) -> tuple[str, ...]:
    """The formats this process can really encode at `sample_rate` (probed once per rate, by encoding
    and decoding 0.2 s of a tone: a few ms; an engine has one rate)."""
    tone = (0.2 * np.sin(np.arange(sample_rate // 5) * 2 * np.pi * 440 / sample_rate)).astype(np.float32)
    working = []
    for name, fmt in FORMATS.items():
        if fmt.container is None:
            working.append(name)
            continue
        try:
            data = encode_whole(tone, sample_rate, fmt)
            decoded, _ = soundfile.read(io.BytesIO(data), dtype="float32")
        except (soundfile.LibsndfileError, RuntimeError, ValueError, TypeError):
            continue
        if decoded.size > 0:
            working.append(name)
    return tuple(working)


def require_format(name: str, sample_rate: int | None = None) -> AudioFormat:
    """The format `name`, if this libsndfile encodes it (at `sample_rate`, the engine's, when known):
    else UnsupportedFormat naming those that work (libsndfile refusing opus at 22 050 Hz was a 500)."""
    working = available_formats()
    if name not in working:
        raise UnsupportedFormat(
            f"response_format {name[:40]!r} is not supported; use one of {', '.join(working)}"
        )
    if sample_rate is not None and name not in (at_rate := available_formats(sample_rate)):
        raise UnsupportedFormat(
            f"response_format {name!r} cannot encode this worker's {sample_rate} Hz audio; "
            f"use one of {', '.join(at_rate)}"
        )
    return FORMATS[name]


def wav_header(sample_rate: int, data_bytes: int | None) -> bytes:
    """A 44-byte PCM16 mono header; `data_bytes=None` writes the unknown length (0xFFFFFFFF) of streams."""
    size = UNKNOWN_LENGTH if data_bytes is None else data_bytes
    riff = UNKNOWN_LENGTH if data_bytes is None else 36 + data_bytes
    return (
        struct.pack("<4sI4s", b"RIFF", riff, b"WAVE")
        + struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, sample_rate, sample_rate * 2, 2, 16)
        + struct.pack("<4sI", b"data", size)
    )


def encode_whole(samples: np.ndarray, sample_rate: int, fmt: AudioFormat) -> bytes:
    """A complete file of the whole audio."""
    if fmt.name == "pcm":
        return to_pcm16(samples).astype("<i2").tobytes()
    if fmt.name == "wav":
        pcm = to_pcm16(samples).astype("<i2").tobytes()
        return wav_header(sample_rate, len(pcm)) + pcm
    buffer = io.BytesIO()
    assert fmt.container is not None
    with soundfile.SoundFile(buffer, "w", sample_rate, 1, fmt.subtype, format=fmt.container) as out:
        out.write(np.asarray(samples, dtype=np.float32))
    return buffer.getvalue()


class _AppendOnly(io.RawIOBase):
    """A seekable in-memory file that keeps only what has not been handed out yet (`take_new`): a
    streamed mp3 or opus held every byte it had sent until its end (10 KB a second of mp3, a long
    text's megabytes at each connection). A write over bytes already sent is dropped: only mp3's close
    writes there (its length frame, which a stream cannot take back); libsndfile reads nothing back."""

    def __init__(self) -> None:
        self.data = bytearray()  # the bytes from `taken` on: written, not handed out yet
        self.position = 0
        self.taken = 0

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def write(self, chunk) -> int:  # type: ignore[no-untyped-def,override]
        chunk = bytes(chunk)
        written = len(chunk)
        if self.position < self.taken:  # (over bytes already sent: too late to change them)
            chunk = chunk[self.taken - self.position :]
        start = max(self.position, self.taken) - self.taken
        end = start + len(chunk)
        if end > len(self.data):
            self.data.extend(b"\0" * (end - len(self.data)))
        self.data[start:end] = chunk
        self.position += written
        return written

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.position, 2: self.taken + len(self.data)}[whence]
        self.position = base + offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        """What is still held from here on; none of what was handed out (no encoder here reads it)."""
        start = self.position - self.taken
        if start < 0:
            return 0
        count = max(0, min(len(buffer), len(self.data) - start))
        buffer[:count] = self.data[start : start + count]
        self.position += count
        return count

    def take_new(self) -> bytes:
        new = bytes(self.data)
        self.taken += len(new)
        self.data.clear()
        return new


class _BlankFrameDrop:
    """A streamed mp3's first frame, the length frame lame writes blank (a frame header, then zeros) and
    libsndfile fills at the close, left out of the bytes sent: filled too late for a stream, it was a
    frame of silence before the audio. The next frame starts with its sync byte, 0xFF: the first byte
    that is not zero past the header. Bytes that do not start so are sent as they are."""

    HEADER_BYTES = 4

    def __init__(self) -> None:
        self._head = b""  # the first frame's header bytes seen so far, while it is still looked at
        self._done = False

    def cut(self, data: bytes) -> bytes:
        if self._done or not data:
            return data
        data = self._head + data
        if data[0] != 0xFF or (len(data) > 1 and data[1] & 0xE0 != 0xE0):  # no frame sync: not lame's
            self._done = True
            return data
        if len(data) <= self.HEADER_BYTES:
            self._head = data
            return b""
        self._head = data[: self.HEADER_BYTES]
        rest = data[self.HEADER_BYTES :].lstrip(b"\0")
        if not rest:
            return b""  # (still the blank frame's zeros)
        self._done = True
        return rest


class StreamEncoder:
    """Float32 chunks in, encoded bytes out as soon as the format allows (`feed`, then `finish`)."""

    def __init__(self, fmt: AudioFormat, sample_rate: int) -> None:
        self.fmt = fmt
        self.sample_rate = sample_rate
        self._started = False
        self._held: list[np.ndarray] = []
        self._file: soundfile.SoundFile | None = None
        self._sink = _AppendOnly()
        self._blank_frame = _BlankFrameDrop() if fmt.name == "mp3" and fmt.streams else None
        if fmt.container is not None and fmt.streams:
            self._file = soundfile.SoundFile(
                self._sink,
                "w",
                sample_rate,
                1,
                fmt.subtype,
                format=fmt.container,
                compression_level=fmt.stream_compression_level,
                bitrate_mode=fmt.stream_bitrate_mode,
            )

    @property
    def encodes_as_it_goes(self) -> bool:
        """True when `feed` runs a real encoder (opus: ~40 ms of CPU per second of audio), which
        callers on an event loop should run in a thread; wav/pcm/held formats only copy."""
        return self._file is not None

    async def feed_async(self, samples: np.ndarray) -> bytes:
        """`feed`, off the event loop when it encodes (calls stay in order: each is awaited)."""
        if self.encodes_as_it_goes:
            return await asyncio.to_thread(self.feed, samples)
        return self.feed(samples)

    async def finish_async(self) -> bytes:
        return await asyncio.to_thread(self.finish)

    def feed(self, samples: np.ndarray) -> bytes:
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        if self.fmt.name in ("wav", "pcm"):
            header = b""
            if self.fmt.name == "wav" and not self._started:
                header = wav_header(self.sample_rate, None)
            self._started = True
            return header + to_pcm16(samples).astype("<i2").tobytes()
        if self._file is None:
            self._held.append(samples)
            return b""
        self._file.write(samples)
        return self._sent(self._sink.take_new())

    def _sent(self, data: bytes) -> bytes:
        return self._blank_frame.cut(data) if self._blank_frame is not None else data

    def finish(self) -> bytes:
        if self.fmt.name in ("wav", "pcm"):
            return b"" if self._started else self.feed(np.zeros(0, dtype=np.float32))
        if self._file is None:
            whole = np.concatenate(self._held) if self._held else np.zeros(0, dtype=np.float32)
            self._held = []  # the file is what is sent now: the samples need not stay beside it
            return encode_whole(whole, self.sample_rate, self.fmt)
        self._file.close()
        return self._sent(self._sink.take_new())

    def release(self) -> None:
        """Let go of the samples a whole-file format holds (a caller that hung up: nothing is sent)."""
        self._held = []
