"""The parent's reader of the espeak child's frames (`espeak_child.py` writes them: a kind byte, a
little-endian u32 length, the payload): the engine lane reads a request's audio through it, pushed to
its sink (split out of `espeak_child.py`, which runs in the child and never reads with it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Protocol

import numpy as np

from .espeak_child import HEADER, MAX_FRAME, BrokenStream


class UnreadFrame(Exception):
    """`FrameReader.audio_into`'s read of the pipe failed (`error`: BrokenStream, OSError, or the
    ValueError of a pipe the worker closed): told apart from what its sink raised."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class Watch(Protocol):
    """What `FrameReader` tells of its waits (`RequestDeadline`)."""

    waiting_since: float | None


class FrameReader:
    """The parent's reader of the child's frames: a `readinto` takes what the pipe holds (a write of
    held frames, often several) into a buffer kept for the child's life, and each frame is cut out of it
    by one `unpack_from` and a slice (a fresh, writable payload: the buffer is reused). Read as a header
    and a payload, a frame was ≈ 13 Python calls on the engine lane, two reads and four `len`s among them
    (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53). `watch`: a request's deadline, told when a read
    waits on the pipe (its clock runs only then: a read a pipe's worth, not a clock read a frame);
    `before_wait`, called before each such read (the engine lane's held wake-ups of the loop go then).

    The buffer starts at `size` and doubles, up to `most`, each time a read fills it to its end (the
    pipe held more): it was `most` (1 MiB, zero-filled, so resident) from the start, for every child,
    the phonemizer's too, whose answers are a few hundred bytes; a child's reads now keep it as large as
    the largest they bring. A frame larger than the buffer is read into a payload of its own."""

    def __init__(self, pipe: IO[bytes], size: int, most: int = 0) -> None:
        self._readinto = pipe.readinto  # type: ignore[attr-defined]  # IO[bytes] has no readinto in typeshed
        self._buffer = bytearray(size)
        self._view = memoryview(self._buffer)
        self._most = max(size, most)
        self._start = self._end = 0  # the bytes read and not yet cut out
        self.watch: Watch | None = None
        self.before_wait: Callable[[], object] | None = None

    def read(self) -> tuple[bytes, bytearray]:
        """The next frame's kind and payload; BrokenStream at EOF or on garbage."""
        start, buffer = self._start, self._buffer
        if self._end - start >= 5:  # (HEADER.size) the frame, if it is all here: no call but these
            kind, length = HEADER.unpack_from(buffer, start)
            if start + 5 + length <= self._end:
                self._start = start + 5 + length
                return kind, buffer[start + 5 : start + 5 + length]
        return self._read_more()

    def audio_into(self, audio: bytes, sink: Callable[[np.ndarray], bool]) -> tuple[bytes, bytearray] | None:
        """Frames of kind `audio` handed to `sink` as float32 samples, one call each, until a frame of
        another kind (returned) or a `sink` that returns False (None). The engine lane's push loop: a
        frame is one `unpack_from`, `frombuffer` and the sink's call, where `read` and a generator
        resumed around it were two calls more (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 55).
        A read that fails, or an audio frame that is not whole samples, is an `UnreadFrame`; what `sink`
        raises passes as it is."""
        frombuffer, float32 = np.frombuffer, np.float32
        while True:
            start, end, buffer = self._start, self._end, self._buffer
            frame: tuple[bytes, bytearray] | None = None
            if end - start >= 5:  # (HEADER.size) as in `read`: the frame, if it is all here
                kind, length = HEADER.unpack_from(buffer, start)
                if start + 5 + length <= end:
                    self._start = start + 5 + length
                    frame = kind, buffer[start + 5 : start + 5 + length]
            if frame is None:
                try:
                    frame = self._read_more()
                except (BrokenStream, OSError, ValueError) as error:
                    raise UnreadFrame(error) from error
            if frame[0] != audio:
                return frame
            try:  # (no cost unless it raises: the frame's calls stay three)
                chunk = frombuffer(frame[1], dtype=float32)
            except ValueError as error:  # not whole samples: a damaged child's, never the sink's error
                raise UnreadFrame(BrokenStream(f"an audio frame of {len(frame[1])} bytes")) from error
            if not sink(chunk):
                return None

    def _read_more(self) -> tuple[bytes, bytearray]:
        while True:
            start, end, size = self._start, self._end, len(self._buffer)
            need = HEADER.size
            if end - start >= HEADER.size:
                kind, length = HEADER.unpack_from(self._buffer, start)
                if length > MAX_FRAME:
                    raise BrokenStream(f"a frame of {length} bytes")
                need += length
                if need > size:  # larger than the buffer: a payload of its own
                    return kind, self._read_large(start + HEADER.size, end, length)
                if end - start >= need:
                    self._start = start + need
                    return kind, self._buffer[start + HEADER.size : start + need]
            if start == end or start + need > size:  # what is held to the front: room for the frame
                self._buffer[: end - start] = self._buffer[start:end]
                start, end = self._start, self._end = 0, end - start
            self._end = end = end + self._wait(self._view[end:])
            if end == size < self._most:  # the pipe may hold more than the buffer: a larger one
                self._grow(min(2 * size, self._most))

    def _grow(self, size: int) -> None:
        """A buffer of `size` bytes, with what is held at its front."""
        start, end = self._start, self._end
        buffer = bytearray(size)
        buffer[: end - start] = self._buffer[start:end]
        self._view.release()
        self._buffer, self._view = buffer, memoryview(buffer)
        self._start, self._end = 0, end - start

    def _read_large(self, start: int, end: int, length: int) -> bytearray:
        payload = bytearray(length)
        payload[: end - start] = self._buffer[start:end]
        self._start = self._end = 0
        view, filled = memoryview(payload), end - start
        while filled < length:
            filled += self._wait(view[filled:])
        return payload

    def _wait(self, into: memoryview) -> int:
        before = self.before_wait
        if before is not None:
            before()
        watch = self.watch
        if watch is not None:
            watch.waiting_since = time.monotonic()
        try:
            got = self._readinto(into)
        finally:
            if watch is not None:
                watch.waiting_since = None
        if not got:
            raise BrokenStream("the pipe closed")
        return int(got)
