"""espeak-ng synthesising in a child process, seen from the server: the same engine and the same chunks,
with none of espeak's callbacks, resampling or gathering under the server's GIL.

The child (`espeak_child.py`) runs an `EspeakEngine` of its own and sends each chunk that engine hands
over as one frame; this side blocks in `read` (no lock held) between frames. Languages are checked here,
against the voice list the child sent once at start, so an unknown language is refused before a request
queues, as with the in-process engine. A child that dies fails the section it was making and is started
again for the next one.
"""

from __future__ import annotations

import itertools
import logging
import os
import subprocess
import threading
from collections.abc import Callable, Iterator

import msgspec
import numpy as np

from ..deadline_thread import Armed
from ..protocol import EngineError, ModelLoadError, WorkerError
from . import espeak_ahead, espeak_early
from .base import SynthesisRequest
from .espeak_ahead import AheadRequests, Unheard
from .espeak_child import (
    AUDIO,
    END,
    FAILED,
    PHONEMES,
    PHONEMIZE,
    PIPE_BYTES,
    READY,
    REQUEST,
    REQUEST_ID,
    STOP,
    BrokenStream,
    Failure,
    Phonemize,
    Ready,
    Request,
    write_frame,
)
from .espeak_deadlines import DEADLINES
from .espeak_failures import ChildGone, child_error, child_failure
from .espeak_frame_reader import FrameReader, UnreadFrame
from .espeak_lib import EspeakVoice, find_voice
from .espeak_request_deadline import RequestDeadline

log = logging.getLogger(__name__)

# A child that has not done what it was told by then is killed: exit once closed, end a request once
# stopped (it answers a `STOP` within `STOP_LOOK_SECONDS`: one that does not is stopped itself, by
# SIGSTOP or a hung host, and the engine thread, or the shutdown's join after it, waited for ever).
STOP_SECONDS = espeak_ahead.STOP_SECONDS
# A `PHONEMIZE` is answered in ≈ 4 µs a character (0.6 ms a sentence, 23 ms for 8 700 characters);
# a child still silent after this many seconds (and these per character) is killed and the call fails.
PHONEMIZE_SECONDS = 5.0
PHONEMIZE_SECONDS_PER_CHAR = 0.001
# A child is ready in ≈ 0.1 s (a lane's whole load 0.3–0.4 s); one not ready after this is killed and
# its start fails (ModelLoadError): a child stopped before it was ready held its lane's load, and the
# shutdown's join after it, for ever.
START_SECONDS = 10.0
CLOSED = "espeak-ng's process was closed: the worker is shutting down"
FIRST_ANSWER_BYTES, ANSWER_BUFFER_BYTES = 64 * 1024, PIPE_BYTES  # the reader's buffer, grown to the pipe


class ChildEspeak(AheadRequests):
    """One espeak-ng child process and what it said about itself at start (the library's face that
    `EspeakEngine` looks voices up on); a batch's next request may go to it ahead (`espeak_ahead.py`)."""

    def __init__(self, process: subprocess.Popen[bytes] | None = None) -> None:
        """`process`: a child already started (`espeak_early`), whose `READY` is read here."""
        try:
            self._process = process if process is not None else espeak_early.spawn()
        except OSError as error:
            raise ModelLoadError(f"cannot start espeak-ng's process: {error}") from error
        assert self._process.stdin is not None and self._process.stdout is not None
        self._requests = self._process.stdin.fileno()
        # Frames to the child come from the engine thread (requests) and from a canceller on another
        # (`stop_running`): one writer at a time, and none once the pipe (its fd number) is closed
        self._writing = threading.Lock()
        self._closed = False
        self._closing = False  # the worker is closing it: a write that fails now is no death to retry
        self._ids = itertools.count(1)
        self._live: int | None = None  # the request in flight: what a `STOP` names
        self._stopped: int | None = None  # the request a `STOP` has gone for (one a request)
        self._ahead: Request | None = None  # the request sent ahead of its turn (`espeak_ahead.py`)
        self._taken_ahead = False  # the request in hand is one sent ahead
        self._ahead_stopped: int | None = None  # one sent ahead that a queued preview stopped
        self._overdue: str | None = None  # what it did not answer in time, once killed for it
        # A deadline's kill is decided under this lock against what it waits on (`_live`, `_asking`),
        # and a request starts under it: a deadline that fired as its answer came killed the child
        # after that (the next request's, which then failed as if it had not been answered)
        self._fate = threading.Lock()
        self._asking: object | None = None  # the start or phonemize call a deadline waits on
        self._synthesis = RequestDeadline(self._kill_overdue)  # a request's next audio, or its end
        # Buffered: a read takes the frames the pipe holds (a frame's header and audio, or a write of
        # held frames), each a release and a retaking of the GIL beside the event loop
        self._answers = FrameReader(self._process.stdout, FIRST_ANSWER_BYTES, ANSWER_BUFFER_BYTES)
        started = self._arm(START_SECONDS, f"its start within {START_SECONDS:g} s")
        try:
            kind, payload = self._receive()
            self._answered(started)
            if kind == FAILED:
                raise ModelLoadError(msgspec.json.decode(payload, type=Failure).message)
            if kind != READY:
                raise ModelLoadError(f"espeak-ng's process sent {kind!r} before it was ready")
            ready = msgspec.json.decode(payload, type=Ready)
        except (WorkerError, msgspec.DecodeError) as error:
            self._answered(started)
            self.close()
            if isinstance(error, ModelLoadError):
                raise
            raise ModelLoadError(f"espeak-ng's process did not start: {error}") from error
        self.version, self.sample_rate, self.default_rate = (
            ready.version,
            ready.sample_rate,
            ready.default_rate,
        )
        self._voices = tuple(EspeakVoice(v.name, v.identifier, v.languages) for v in ready.voices)

    @property
    def pid(self) -> int:
        return self._process.pid

    def kill(self) -> None:
        """End the child at once (a read waiting on it gets its end: `EngineError`)."""
        self._process.kill()

    @property
    def alive(self) -> bool:
        """Asks the kernel (`wait4`): for callers outside the request path (the phonemizer)."""
        return self._process.poll() is None

    @property
    def closed(self) -> bool:
        """Known to be over: closed by the worker, after its pipe failed (`_broken`, `ChildGone`), or
        killed by a deadline (perhaps as its answer came: the call had it, the next starts another).
        No system call: a request used to ask `alive` first, one `wait4` (and a hand-off of the GIL
        to the event loop) each; a child that dies while idle is found by the request's write."""
        return self._closed or self._overdue is not None

    def voices(self) -> tuple[EspeakVoice, ...]:
        return self._voices

    def find_voice(self, name: str) -> EspeakVoice | None:
        return find_voice(self._voices, name)

    def chunks(
        self, request: SynthesisRequest, again: Callable[[], ChildEspeak] | None = None
    ) -> Iterator[np.ndarray]:
        """The request's audio as the child makes it; closing the iterator early stops the child's
        synthesis and reads what it had already sent, so the next request starts clean. A child that
        leaves a read of its next audio (or its end) waiting past `espeak_request_deadline`'s bound is
        killed and the section fails (`EngineError`): a stopped one held the lane for ever. `again`: the
        child that takes the request, once, if its write finds this one dead (`ChildGone`, before any
        chunk; here, not in a generator around this one: a call less a frame)."""
        child = self._sent(request, again)
        ended, answers = False, child._answers
        try:
            while True:
                try:  # (not `_receive`: a call less a frame)
                    kind, payload = answers.read()
                except (BrokenStream, OSError, ValueError) as error:
                    raise child._unread(error, reading=True) from error
                if kind == AUDIO:
                    try:  # not whole samples: a damaged child's frame (was a bare ValueError)
                        chunk = np.frombuffer(payload, dtype=np.float32)
                    except ValueError as error:
                        raise child._broken(
                            f"an audio frame of {len(payload)} bytes", reading=True
                        ) from error
                    yield chunk
                    continue
                ended = True
                child._last_frame(kind, payload)
                return
        finally:
            child._request_over(ended)

    def chunks_into(
        self,
        request: SynthesisRequest,
        sink: Callable[[np.ndarray], bool],
        again: Callable[[], ChildEspeak] | None = None,
        sent: Callable[[], object] | None = None,
        waiting: Callable[[], object] | None = None,
    ) -> None:
        """`chunks` pushed: each chunk handed to `sink` as its frame is read, until the request ends or
        `sink` returns False (stopped early, as closing `chunks` does: the same `STOP` and drain). The
        engine lane's way (`stream_into`): the generator resumed a frame and its `read` were two Python
        calls a frame (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 55). The same deadline, `again`
        and failures as `chunks`. `sent` is called once the request is written, while the child makes it;
        `waiting` before each read of this request that waits on the pipe (`FrameReader.before_wait`)."""
        child = self._sent(request, again)
        ended, answers = False, child._answers
        answers.before_wait = waiting
        ahead = Unheard() if child._taken_ahead else None  # (one sent ahead: made again if lost unheard)
        try:
            if sent is not None:  # (in here: one that raises still has the request stopped and drained)
                sent()
            try:
                last = answers.audio_into(AUDIO, sink) if ahead is None else ahead.read(answers, sink)
            except UnreadFrame as unread:
                again = None if ahead is None or ahead.heard or child._closing else again
                lost = child._unread(unread.error, reading=True)  # (it closes the child)
                if again is None:
                    raise lost from unread.error
                log.warning(
                    "espeak-ng's process ended with a request sent ahead (%s); sending it again", lost
                )
                again().chunks_into(request, sink, None, None, waiting)
                return
            if last is None:
                return  # (the sink stopped it: drained below)
            ended = True
            child._last_frame(*last)
        finally:
            try:
                child._request_over(ended)
            finally:
                answers.before_wait = None

    def phonemize(self, text: str, voice: str) -> str:
        """`EspeakLibrary.phonemize` in the child (one caller at a time: `ChildPhonemizer` holds a lock).
        A child that does not answer within `PHONEMIZE_SECONDS` (and a little more a character) is
        killed, and the call ends in an `EngineError`: a stopped child held ZipVoice's engine thread,
        and every request behind it, for ever."""
        self.drop_ahead()  # (its answer comes first)
        seconds = PHONEMIZE_SECONDS + PHONEMIZE_SECONDS_PER_CHAR * len(text)
        asked = self._arm(seconds, f"a phonemize call within {seconds:g} s")
        try:
            self._send(PHONEMIZE, msgspec.json.encode(Phonemize(text, voice)))
            kind, payload = self._receive(reading=True)
        finally:
            self._answered(asked)
        if kind == PHONEMES:
            return payload.decode("utf-8")
        if kind == FAILED:
            raise self._failed(payload)
        raise self._broken(f"an unexpected frame {kind!r}")

    def stop_running(self, wait: bool = False) -> bool:
        """Ask the child to stop the request in flight, from any thread (a cancel on the event loop:
        the child had held the request's later frames up to 10 ms, and a cancel seen only once they
        came freed the lane that much later; benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 50).
        The `STOP` names the request, so one that reaches the child after that request has ended is
        dropped there, never stopping the next; one `STOP` a request at most (a flood of cancels
        cannot fill the child's stdin). The canceller (the event loop, under the admission's lock)
        never waits on the child: not for the engine thread's write of a request (a child stopped
        mid-read would hold it for ever), not on a full pipe; the engine thread stops the request at
        its next chunk then, as before. `wait`: the engine thread's own stop, which may block. True
        if a `STOP` was sent now."""
        if not self._writing.acquire(blocking=wait):
            return False
        try:
            live = self._live
            if live is None or live == self._stopped or self._closed:
                return False
            if not wait:
                os.set_blocking(self._requests, False)  # (under the lock: no other write meanwhile)
            try:
                write_frame(self._requests, STOP, REQUEST_ID.pack(live))  # 9 bytes: whole or not at all
            except OSError:  # a full pipe, or it died: the engine thread's read finds out and says so
                return False
            finally:
                if not wait:
                    os.set_blocking(self._requests, True)
            self._stopped = live
            DEADLINES.arm(STOP_SECONDS, lambda: self._kill_if_still(live))
            return True
        finally:
            self._writing.release()

    def _arm(self, seconds: float, what: str) -> tuple[object, Armed]:
        """A deadline on the start or a phonemize call (one at a time); `_answered` when it ends."""
        asking = self._asking = object()
        return asking, DEADLINES.arm(
            seconds, lambda: self._kill_overdue(what, lambda: self._asking is asking)
        )

    def _answered(self, armed: tuple[object, Armed]) -> None:
        with self._fate:
            self._asking = None
        armed[1].cancel()

    def _kill_if_still(self, live: int) -> None:
        """A `STOP`'s deadline: killed if the request it named is still in flight."""
        self._kill_overdue(_STOP_ANSWER, lambda: self._live == live)

    def _kill_overdue(self, what: str, waiting: Callable[[], bool]) -> None:
        """A deadline's end (`espeak_deadlines`): the child did not answer `what`, and `waiting` says
        the call still waits; killing it ends the wait on its pipe (`EngineError` saying why)."""
        with self._fate:
            if self._closed or self._overdue or not waiting() or self._process.poll() is not None:
                return
            self._overdue = what
        log.warning("espeak-ng's process %s did not answer %s (stopped or hung); killing it", self.pid, what)
        self.kill()

    def _stop(self) -> None:
        """The engine thread's side of a stop: the `STOP` (unless a canceller sent it), then what the
        child had sent before it, up to its `END`."""
        try:
            self.stop_running(wait=True)
            while self._receive()[0] == AUDIO:
                pass
        except EngineError:
            pass  # it died meanwhile: the next request starts another

    def _sent(self, request: SynthesisRequest, again: Callable[[], ChildEspeak] | None) -> ChildEspeak:
        """`chunks`' and `chunks_into`'s start: the child that took the request, its deadline started:
        this one, or, if its write finds it gone (`ChildGone`), `again`'s, once (without `again`, or
        gone again at once, it raises). A request sent ahead that asks the same is taken as sent."""
        try:
            if self._ahead is None or not self._adopted(request):
                live = next(self._ids) % (1 << 32)
                frame = Request(live, request.text, request.lang, request.speed_factor, request.early_audio)
                self._send(REQUEST, msgspec.json.encode(frame), live)
        except ChildGone:
            if again is None:
                raise
            try:
                return again()._sent(request, None)
            except ChildGone as twice:
                raise _ended_again(twice) from twice
        self._synthesis.start(len(request.text))
        self._answers.watch = self._synthesis  # (its clock runs while a read waits on the pipe)
        return self

    def _last_frame(self, kind: bytes, payload: bytearray) -> None:
        """A request's frame that is not AUDIO: its `END` returns; a `FAILED` or any other raises."""
        if kind == END:
            return
        if kind == FAILED:
            raise self._failed(payload)
        raise self._broken(f"an unexpected frame {kind!r}")

    def _request_over(self, ended: bool) -> None:
        """`chunks`' and `chunks_into`'s end: a request stopped early (`ended` False) drained (one that
        failed is closed), its deadline and the id a `STOP` names let go."""
        self._answers.watch, self._taken_ahead = None, False
        if not ended and not self._closed:
            self._stop()  # (bounded by the `STOP`'s own deadline)
        self._synthesis.end()
        self._live = None

    def _send(self, kind: bytes, payload: bytes = b"", live: int | None = None) -> None:
        """A frame to the child; `live`: the id of the request it starts (what a `STOP` names from now)."""
        with self._writing:
            try:
                if self._closed:
                    raise OSError("closed")
                if live is not None:
                    with self._fate:
                        if self._overdue is not None:  # killed as its last request ended: not this one's
                            raise BrokenPipeError("killed by a deadline before this request")
                        self._live = live
                write_frame(self._requests, kind, payload)
                return
            except OSError as error:
                failed = error
        if live is not None and isinstance(failed, BrokenPipeError) and not self._closing:
            self.close()
            raise ChildGone(f"its pipe: {failed}") from failed
        raise self._broken(f"its pipe: {failed}") from failed  # (it closes the child: not under the lock)

    def _receive(self, reading: bool = False) -> tuple[bytes, bytearray]:
        """The next frame; `reading`: the child is reading a request's text (its crash is the text's)."""
        try:
            return self._answers.read()
        except (BrokenStream, OSError, ValueError) as error:
            raise self._unread(error, reading) from error

    def _failed(self, payload: bytes | bytearray) -> WorkerError:
        """A `FAILED` frame as the child's error; one that is no `Failure` is a damaged child's broken
        stream (it was msgspec's bare DecodeError, and the child that sent it served on)."""
        try:
            return child_error(msgspec.json.decode(payload, type=Failure))
        except msgspec.DecodeError as error:
            return self._broken(f"a failure that is not one ({error})")

    def _unread(self, error: Exception, reading: bool) -> WorkerError:
        """A read of a frame that failed, as the caller's error (closing the child)."""
        if isinstance(error, ValueError):  # the worker's close (the shutdown's thread) closed its pipe:
            return self._broken(f"closed by the worker: {error}")  # was a bare ValueError
        return self._broken(str(error), reading)

    def _broken(self, why: str, reading: bool = False) -> WorkerError:
        self.close()
        return child_failure(why, self._process.returncode, self._overdue, reading)

    def close(self) -> None:
        """Closing its stdin ends the child; one that does not end in time is killed. Under the write
        lock, so a canceller's `STOP` never goes to whatever reuses the fd number; a write that holds
        the lock past `STOP_SECONDS` is stuck on a child that stopped reading (SIGSTOP, a hung host)
        with its pipe full, and the shutdown waited for it for ever: the child is killed, which fails
        that write (its pipe has no reader) and frees the lock; that request fails (`EngineError`),
        not sent again to a new child (`ChildGone` is a child that died by itself)."""
        self._closing = True
        if not self._writing.acquire(timeout=STOP_SECONDS):
            log.warning("espeak-ng's process %s stopped reading its requests; killing it", self._process.pid)
            self.kill()
            self._writing.acquire()
        try:
            self._closed = True
            for pipe in (self._process.stdin, self._process.stdout):
                if pipe is not None:
                    pipe.close()
        finally:
            self._writing.release()
        try:
            self._process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            log.warning("espeak-ng's process %s did not exit; killing it", self._process.pid)
            self._process.kill()
            self._process.wait()


_STOP_ANSWER = f"a stop of its request within {STOP_SECONDS:g} s"


def _ended_again(twice: ChildGone) -> WorkerError:
    """The second child, started for a request the first was found dead for, gone at once too."""
    return EngineError(f"espeak-ng's process failed ({twice}; it ended again at once)")
