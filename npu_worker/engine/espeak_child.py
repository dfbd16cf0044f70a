"""espeak-ng in a process of its own: the child side, and the frames both sides speak over its pipes.

Why a process: espeak calls back into Python for every buffer it makes (`BUFFER_MS` of audio), and in
the server each call takes the GIL from the event loop (benchmarks/SERVER_OVERHEAD.md). Here espeak,
its callbacks, the resampling and the gathering run under this process's GIL; the server reads a few
finished chunks per sentence from a pipe, blocked in a system call that holds no lock.

Frames are a kind byte, a little-endian u32 length, and the payload. The parent sends `REQUEST` (a JSON
object: id, text, lang, speed_factor, early_audio) and `STOP` (a u32: the id of the request to stop; one
for any other request, sent late from another thread, is dropped, so it never cuts the next one); the
child answers `READY` once (JSON: version, rates, voices), then per request `AUDIO` frames (float32
samples at 24 kHz) and one `END` or `FAILED` (JSON: the error's name and message); a request's first
frame is written alone (held as the later ones when `early_audio` is false), and the child then yields
its core once (the lane whose write of the request woke it waits there to read that frame), the later
ones a few to a write (`HOLD_SECONDS`), the last with the `END`; a `STOP` is looked for at each write but the first and
every `STOP_LOOK_SECONDS` while frames are held. A `REQUEST` that comes while another is made (a
batch's next section, sent ahead) is made after it, its answer after the other's `END`; a `STOP` naming
it before its turn makes that answer an `END` alone. `PHONEMIZE` (JSON: text, voice) is answered with one
`PHONEMES` frame (UTF-8) or `FAILED`: ZipVoice's tokenizer reads its phonemes here, so a text that
crashes espeak-ng (its parser has known overflows: "s'" * 100 aborts the process) ends this process,
not the worker. The child exits when its stdin closes; nothing but frames goes to the pipe it writes
(its own stdout is pointed at stderr).
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import sys
import time
from typing import IO

import msgspec
import numpy as np

from .. import heap
from ..protocol import WorkerError
from .base import SynthesisRequest
from .espeak import EspeakEngine

HEADER = struct.Struct("<cI")
_FLOAT32 = np.dtype(np.float32)
REQUEST_ID = struct.Struct("<I")  # a `STOP`'s payload: the request it stops
REQUEST, STOP, PHONEMIZE = b"Q", b"S", b"P"  # parent → child
READY, AUDIO, END, FAILED, PHONEMES = b"R", b"A", b"E", b"F", b"H"  # child → parent
END_HEADER = HEADER.pack(END, 0)
MAX_FRAME = 64 * 1024 * 1024  # a frame longer than this is a broken stream, not audio
# A request's audio past its first frame waits up to this long to share one write with the frames made
# meanwhile (espeak makes 0.6 s of audio in ≈ 1.5 ms): each write was a wake-up of the reading engine
# thread, a read and a GIL hand-off beside the event loop, ≈ 10 a preview (benchmarks/SERVER_OVERHEAD.md,
# 2026-12-06, stop 49). A listened request's first frame goes at once (0.19 s of audio: its listener then
# holds more than 10 ms to play); a request's last frames go with its `END`, so its end comes no later.
HOLD_SECONDS = 0.010
# While frames are held, a `STOP` is looked for at most this often: espeak runs on meanwhile, and a stop
# looked for only at a write answered a cancel ≈ 10 ms late (1.2 ms before the frames were held), the
# lane busy making audio nobody takes while the caller's next request waited (benchmarks/
# SERVER_OVERHEAD.md, 2026-12-06, stop 49). A look is a `select` of this process's, waking nobody.
STOP_LOOK_SECONDS = 0.002
IOV_PARTS = 512  # at most this many buffers a `writev` (Linux takes 1024)
PIPE_BYTES = 1024 * 1024  # the pipe's size asked for (Linux's default 64 KiB holds one 0.6 s chunk)


class BrokenStream(Exception):
    """The other side's pipe closed, or sent something that is not a frame."""


Payload = bytes | memoryview
Buffer = bytes | memoryview | np.ndarray  # what `writev` takes (an ndarray's bytes with no view made)


def write_frame(fd: int, kind: bytes, payload: Payload = b"") -> None:
    write_frames(fd, [(kind, payload)])  # (whole: a blocking pipe may take it in pieces)


def write_frames(fd: int, frames: list[tuple[bytes, Payload]]) -> None:
    """Frames in order, in one `writev` where the pipe takes them whole."""
    parts: list[Buffer] = []
    size = 0
    for kind, payload in frames:
        length = len(payload)
        parts += (HEADER.pack(kind, length), payload)
        size += HEADER.size + length
    write_parts(fd, parts, size)


def write_parts(fd: int, parts: list[Buffer], size: int) -> None:
    """Headers and payloads (an ndarray's bytes as they are), `size` bytes in all: one `writev` where
    the pipe takes them whole; a short write (or a wrong `size`) goes on from what it wrote. Views cut
    and popped were ≈ 95 calls a preview (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 57)."""
    written = os.writev(fd, parts) if len(parts) <= IOV_PARTS else 0  # type: ignore[arg-type]  # (an ndarray is a buffer; numpy's stubs don't say)
    if written == size:
        return
    rest = [memoryview(part).cast("B") for part in parts]  # type: ignore[arg-type]
    while True:
        while rest and written >= len(rest[0]):
            written -= len(rest[0])
            rest.pop(0)
        if not rest:
            return
        if written:
            rest[0] = rest[0][written:]
        written = os.writev(fd, rest[:IOV_PARTS])


def read_frame(stream: IO[bytes]) -> tuple[bytes, bytearray]:
    """The next frame's kind and payload (a writable buffer); BrokenStream at EOF or on garbage."""
    header = _read_exact(stream, bytearray(HEADER.size))
    kind, length = HEADER.unpack(header)
    if length > MAX_FRAME:
        raise BrokenStream(f"a frame of {length} bytes")
    return kind, _read_exact(stream, bytearray(length))


def _read_exact(stream: IO[bytes], buffer: bytearray) -> bytearray:
    view, filled = memoryview(buffer), 0
    while filled < len(buffer):
        got = stream.readinto(view[filled:])  # type: ignore[attr-defined]  # IO[bytes] has no readinto in typeshed
        if not got:
            raise BrokenStream("the pipe closed")
        filled += got
    return buffer


class Request(msgspec.Struct, frozen=True):
    id: int  # the parent's count of its requests: a `STOP` names the one it stops
    text: str
    lang: str
    speed_factor: float
    early_audio: bool = True  # someone listens as it is made: its first frame goes at once


class Phonemize(msgspec.Struct, frozen=True):
    text: str
    voice: str


class Voice(msgspec.Struct, frozen=True, array_like=True):
    name: str
    identifier: str
    languages: tuple[str, ...]


class Ready(msgspec.Struct, frozen=True):
    version: str
    sample_rate: int  # espeak's own rate
    default_rate: int  # words per minute
    voices: tuple[Voice, ...]


class Failure(msgspec.Struct, frozen=True):
    type: str
    message: str


class _Child:
    """The loop of the child: one request at a time, audio out as the engine hands it over."""

    def __init__(self, requests: IO[bytes], out_fd: int) -> None:
        self.requests, self.out_fd = requests, out_fd
        self.engine = EspeakEngine()
        self.closed = False  # stdin closed during a synthesis: stop, then exit
        self.decoder = msgspec.json.Decoder(Request)
        self.stop_payload: bytes | None = None  # the request being made's: only a `STOP` naming it stops it
        self.sent_first = False  # the request's first audio frame has gone
        self.held: list[Buffer] = []  # its later frames (header, payload, ...), not yet written
        self.held_bytes = 0  # their payloads' bytes (the headers' not counted)
        self.held_since = 0.0
        self.looked_at = 0.0  # the last look for a stop
        # Requests the parent sent ahead (the next batch section's, `ChildEspeak.send_ahead`), read from
        # stdin while a stop was looked for: made in order once the one in hand ends; a `STOP` naming one
        # makes it an `END` alone (None), so the parent's drain of it finds no audio
        self.ahead: list[tuple[bytes | None, bytearray | None]] = []

    def run(self) -> int:
        try:
            self.engine.load()
        except Exception as error:  # noqa: BLE001 - reported to the parent, which raises it
            self._fail(error)
            return 1
        library = self.engine.library
        voices = tuple(Voice(v.name, v.identifier, v.languages) for v in library.voices())
        ready = Ready(library.version, library.sample_rate, library.default_rate, voices)
        write_frame(self.out_fd, READY, msgspec.json.encode(ready))
        while not self.closed:
            if self.ahead:
                ahead = self.ahead.pop(0)[1]
                if ahead is None:  # stopped before it began
                    write_frame(self.out_fd, END)
                else:
                    self._synthesise(ahead)
                continue
            try:
                kind, payload = read_frame(self.requests)
            except BrokenStream:
                return 0
            if kind == PHONEMIZE:
                self._phonemize(payload)
            elif kind == REQUEST:  # (a STOP that came after its synthesis had ended is dropped)
                self._synthesise(payload)
        return 0

    def _phonemize(self, payload: bytearray) -> None:
        try:
            request = msgspec.json.decode(payload, type=Phonemize)
            phonemes = self.engine.library.phonemize(request.text, request.voice)
        except Exception as error:  # noqa: BLE001 - the request's failure, not the child's
            self._fail(error)
            return
        write_frame(self.out_fd, PHONEMES, phonemes.encode("utf-8"))

    def _synthesise(self, payload: bytearray) -> None:
        self.sent_first, self.held, self.held_bytes, self.stop_payload = False, [], 0, None
        try:
            request = self.decoder.decode(payload)
            self.stop_payload = REQUEST_ID.pack(request.id)
            self.sent_first = not request.early_audio  # (a wake-up of the engine thread nobody read)
            self.engine.stream_into(
                SynthesisRequest(request.text, request.lang, request.speed_factor), self._send
            )
        except Exception as error:  # noqa: BLE001 - the request's failure, not the child's
            self._fail(error)
            return
        self.held += (END_HEADER, b"")
        self._write_held()

    def _send(self, chunk: np.ndarray) -> bool:
        """The engine's sink: the chunk to the parent, unless the parent asked to stop. A listened
        request's first at once, with no look for a stop (a `select` less before the first audio; a `STOP`
        already there is found at the next look, within `STOP_LOOK_SECONDS`); the others held up to
        `HOLD_SECONDS`, then written together (the stop looked for once a write, and while holding at most
        every `STOP_LOOK_SECONDS`, not once a chunk)."""
        audio = chunk  # written as it is: the engine's chunks are contiguous float32 (an attribute look,
        # not `np.ascontiguousarray`'s call a chunk, ≈ 9 a preview; benchmarks/SERVER_OVERHEAD.md, stop 59)
        if audio.__class__ is not np.ndarray or audio.dtype != _FLOAT32 or not audio.flags.c_contiguous:
            audio = np.ascontiguousarray(chunk, dtype=np.float32)
        size, now, held = audio.nbytes, time.monotonic(), self.held
        if not held:
            self.held_since = now
        held += (HEADER.pack(AUDIO, size), audio)
        self.held_bytes += size
        if self.sent_first and self.held_bytes < PIPE_BYTES // 2 and now - self.held_since < HOLD_SECONDS:
            if now - self.looked_at < STOP_LOOK_SECONDS or not self._stop_asked(now):
                return True
            return self._drop_held()
        if self.sent_first and self._stop_asked(now):
            return self._drop_held()
        first, self.sent_first, self.looked_at = not self.sent_first, True, now
        self._write_held()
        if first:  # its core to the lane that woke this child and waits, runnable, to read it
            os.sched_yield()  # (returns at once where nothing else is runnable)
        return True

    def _drop_held(self) -> bool:
        """The request stopped: its held audio unwritten (the parent drops audio up to END); False."""
        self.held, self.held_bytes = [], 0
        return False

    def _write_held(self) -> None:
        held = self.held  # (in one write: the payloads' bytes and a header a frame)
        write_parts(self.out_fd, held, self.held_bytes + HEADER.size * (len(held) // 2))
        self.held, self.held_bytes = [], 0

    def _stop_asked(self, now: float) -> bool:
        """A `STOP` for this request waits on stdin (or stdin closed: stop, then exit), looked for at
        `now`. Every frame waiting is read: a `STOP` for an earlier request (the parent's canceller sent
        it as that one ended) is dropped, and the one for this request may be behind it. A `REQUEST` sent
        ahead is kept for its turn (`ahead`), and a `STOP` naming it stops it there."""
        self.looked_at = now
        while select.select([self.requests], [], [], 0)[0]:
            try:
                kind, payload = read_frame(self.requests)
            except BrokenStream:
                self.closed = True
                return True
            if kind == STOP:
                if payload == self.stop_payload:
                    return True
                self.ahead = [(sid, None if sid == payload else ahead) for sid, ahead in self.ahead]
            elif kind == REQUEST:
                self.ahead.append((self._request_id(payload), payload))
        return False

    def _request_id(self, payload: bytearray) -> bytes | None:
        """A request's id as a `STOP` names it (None: not a request; it fails at its turn)."""
        try:
            return REQUEST_ID.pack(self.decoder.decode(payload).id)
        except (msgspec.DecodeError, struct.error):
            return None

    def _fail(self, error: BaseException) -> None:
        if isinstance(error, WorkerError):  # its name travels apart from the message ("Name: message")
            failure = Failure(error.name, error.message)
        else:
            failure = Failure(type(error).__name__, str(error))
        payload = msgspec.json.encode(failure)  # after the audio made before it
        self.held += (HEADER.pack(FAILED, len(payload)), payload)
        self.held_bytes += len(payload)
        self._write_held()


def main() -> int:
    # The worker's stop (Ctrl-C to the terminal's process group, systemd's SIGTERM to the whole unit)
    # must not kill the child under a section the worker's drain lets finish: the child's life is its
    # stdin, which closes when the worker closes the engine or exits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    heap.keep_freed_memory()  # as in the worker: the child's chunk buffers reuse memory
    out_fd = os.dup(1)
    try:  # room for a write of held frames, so the child does not wait on the reader mid-write
        fcntl.fcntl(out_fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, AttributeError):  # not Linux, or above the system's pipe-max-size: 64 KiB
        pass
    os.dup2(2, 1)  # a stray print (or C code writing to fd 1) cannot break the frame stream
    requests = os.fdopen(0, "rb", buffering=0)  # unbuffered: a STOP never sits unseen in a buffer
    try:
        return _Child(requests, out_fd).run()
    except BrokenPipeError:  # the worker stopped reading (it closed the engine or exited): nothing to tell
        return 0  # (a lane still starting as the worker stopped printed a traceback into the worker's log)


def run_as_main() -> None:
    """The child process's whole life (`espeak_child_start` calls it once its life is the worker's)."""
    code = main()
    sys.stderr.flush()
    # No interpreter teardown (numpy, soxr, the C library: ≈ 50 ms): the worker waits for this exit at
    # its stop, one child per engine lane, and nothing here needs finalising.
    os._exit(code)


if __name__ == "__main__":  # run alone (a test's child); the worker's go through `espeak_child_start`
    run_as_main()
