"""Several WebSocket frames written to the socket at once, each still a frame of its own.

A preview sends about 23 frames (PCM cut to the growing schedule, its events); one `transport.write` per
frame was one `send` syscall each, and one wake-up of the reader. The pump takes what its subscription
already holds and writes it as one burst: the same frames, byte for byte, as aiohttp's writer makes
them (a server's frames are unmasked, uncompressed here, FIN set, the length in its shortest form,
RFC 6455 §5.2), in fewer writes. Pure: no I/O.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from aiohttp import WSMsgType

BURST_BYTES = 64 * 1024  # a burst is written once it holds this much (aiohttp's writer drains every 64 KiB)

_FIN = 0x80
_PACK_16 = struct.Struct("!BBH").pack
_PACK_64 = struct.Struct("!BBQ").pack
_TEXT = _FIN | WSMsgType.TEXT  # a frame's first byte
_BINARY = _FIN | WSMsgType.BINARY


def frame_header(opcode: int, length: int) -> bytes:
    """The header of an unmasked final frame carrying `length` bytes."""
    first = _FIN | opcode
    if length < 126:
        return bytes((first, length))
    if length < 65536:
        return _PACK_16(first, 126, length)
    return _PACK_64(first, 127, length)


class Burst:
    """Frames waiting to go out together, in order."""

    __slots__ = ("_parts", "size")

    def __init__(self) -> None:
        self._parts: list[bytes | memoryview] = []
        self.size = 0  # bytes on the wire, headers included: 0 exactly when empty (a frame's header ≥ 2)

    def __bool__(self) -> bool:
        return bool(self._parts)

    @property
    def full(self) -> bool:
        return self.size >= BURST_BYTES

    # `text` and `binary` make the header inline (`frame_header`'s, byte for byte): a call to it and to
    # a shared adder was two Python calls a frame, ≈ 46 a preview on the loop (SERVER_OVERHEAD.md, stop 54).

    def text(self, payload: bytes) -> None:
        """A text frame: an event's encoded JSON."""
        length = len(payload)
        if length < 126:
            self._parts += (bytes((_TEXT, length)), payload)
            self.size += 2 + length
        else:
            self._parts += (frame_header(WSMsgType.TEXT, length), payload)
            self.size += (4 if length < 65536 else 10) + length

    def binary(self, payload: memoryview) -> None:
        """A binary frame (PCM), from any buffer: it is copied once, into the burst's bytes."""
        length = payload.nbytes
        if length < 126:
            self._parts += (bytes((_BINARY, length)), payload)
            self.size += 2 + length
        elif length < 65536:
            self._parts += (_PACK_16(_BINARY, 126, length), payload)
            self.size += 4 + length
        else:
            self._parts += (_PACK_64(_BINARY, 127, length), payload)
            self.size += 10 + length

    def binaries(self, frames: Sequence[np.ndarray]) -> int:
        """Each array's bytes as a binary frame (`binary`'s, byte for byte), in one call a chunk, not one
        a frame (≈ 8 Python calls a `/ws` preview on the loop; SERVER_OVERHEAD.md, stop 55); the samples
        they hold, returned."""
        parts, size, samples = self._parts, self.size, 0
        for frame in frames:
            length = frame.nbytes
            samples += frame.size
            if length < 126:
                parts += (bytes((_BINARY, length)), frame.data)
                size += 2 + length
            elif length < 65536:
                parts += (_PACK_16(_BINARY, 126, length), frame.data)
                size += 4 + length
            else:
                parts += (_PACK_64(_BINARY, 127, length), frame.data)
                size += 10 + length
        self.size = size
        return int(samples)

    def take(self) -> bytes:
        """The frames as one buffer; the burst is empty after."""
        data = b"".join(self._parts)
        self._parts, self.size = [], 0
        return data
