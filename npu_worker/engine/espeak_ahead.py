"""A batch's next section sent to the espeak child while the current one is made (`ChildEspeak`'s
`send_ahead`): the child reads it while it makes the current one and starts it as that one ends, with no
wait for the worker to end the section, pick the next and write its request (the child sat idle
0.5–0.6 ms at the median and 4 ms at the p90 between two sections; benchmarks/SERVER_OVERHEAD.md,
2026-12-07, stop 63).

The request sent ahead is a guess: the admission still picks the next section when the current one ends,
as before. If the pick asks the same (text, language, speed, early audio) it is taken as it is
(`adopt_ahead`); anything else (a preview, another job, a cancelled batch, a cached section) stops it
first (`drop_ahead`: its `STOP`, its frames read and thrown away up to its `END`, no chunk to any sink).
"""

from __future__ import annotations

import itertools
import os
import select
import threading
from collections.abc import Callable

import msgspec
import numpy as np

from ..protocol import EngineError
from .base import SynthesisRequest
from .espeak_child import AUDIO, REQUEST, REQUEST_ID, STOP, Request, write_frame
from .espeak_deadlines import DEADLINES
from .espeak_failures import ChildGone
from .espeak_frame_reader import FrameReader

# A request sent ahead goes in one non-blocking write no longer than a pipe's atomic write (4 KiB on
# Linux): whole or not at all. A longer one is not sent ahead: a blocking write of it could wait on a
# child that waits in its turn for this thread to read its audio (the child reads stdin only between
# its writes).
AHEAD_BYTES = select.PIPE_BUF - 5  # (less a frame's header)
STOP_SECONDS = 2.0  # (`espeak_process.STOP_SECONDS`: a child that has not ended a stopped request is killed)


class AheadRequests:
    """`ChildEspeak`'s side of a request sent ahead; its state (`_ahead`) lives there."""

    _ahead: Request | None
    _closed: bool
    _ids: itertools.count[int]
    _requests: int
    _writing: threading.Lock
    _live: int | None
    _taken_ahead: bool
    _fate: threading.Lock
    _overdue: str | None
    _ahead_stopped: int | None  # the request sent ahead that `stop_ahead` stopped

    def send_ahead(self, request: SynthesisRequest) -> bool:
        """Write `request` to the child now, to be made after the one in hand (one at most). Nothing is
        sent (False) if one is already ahead, the child is closed, the frame is too long or the pipe has
        no room: the request then goes as before, when its turn comes. Never raises: a dead child is
        found by the read of the request in hand, which says what became of it."""
        if self._ahead is not None or self._closed:
            return False
        ahead = next(self._ids) % (1 << 32)
        frame = Request(ahead, request.text, request.lang, request.speed_factor, request.early_audio)
        payload = msgspec.json.encode(frame)
        if len(payload) > AHEAD_BYTES:
            return False
        with self._writing:
            if self._closed:
                return False
            os.set_blocking(self._requests, False)
            try:
                write_frame(self._requests, REQUEST, payload)
            except OSError:  # no room (EAGAIN), or the child died: its current read says so
                return False
            finally:
                os.set_blocking(self._requests, True)
            self._ahead = frame  # (under the lock: `stop_ahead` sees it once it is sent)
        return True

    def adopt_ahead(self, request: SynthesisRequest) -> int | None:
        """The id of the request sent ahead if it asks what `request` asks (it is then in hand), else
        None, the one sent ahead (if any) stopped and drained first. Taken under the write lock: a
        `stop_ahead` either stopped it before (not taken) or finds it gone (a `STOP` that came after
        it was taken would have cut the section in hand short, its audio written as whole)."""
        ahead = self._take_ahead()
        if ahead is None:
            return None
        if self._ahead_stopped != ahead.id and (
            ahead.text,
            ahead.lang,
            ahead.speed_factor,
            ahead.early_audio,
        ) == (
            request.text,
            request.lang,
            request.speed_factor,
            request.early_audio,
        ):
            return ahead.id
        self._drop(ahead.id)
        return None

    def _adopted(self, request: SynthesisRequest) -> bool:
        """The request sent ahead is `request`'s and now in flight (True); else it was stopped and
        drained. A child killed by a deadline meanwhile, or found dead by that drain, is gone for
        `request` (`ChildGone`: another makes it, as a request's write that finds it dead has it)."""
        live = self.adopt_ahead(request)
        if live is None:
            if self._closed:
                raise ChildGone("found dead as the request sent ahead was read away")
            return False
        with self._fate:
            if self._overdue is None and not self._closed:
                self._live, self._taken_ahead = live, True
                return True
        self.close()
        raise ChildGone("ended before the request sent ahead was read")

    def stop_ahead(self) -> None:
        """A preview was queued behind the section in hand (the admission, under its lock, from the
        thread that queued it: never waits): the request sent ahead is stopped now, so the child answers
        it with an `END` alone if its turn has not come, and a pick of the preview drains one short frame,
        not the child's time to its first look (≈ 5 ms at the median, `batch_cost.py --ahead-drop`). It is
        not taken after that: the batch's section goes as before, when the admission picks it."""
        ahead = self._ahead
        if ahead is None or self._ahead_stopped == ahead.id or not self._writing.acquire(blocking=False):
            return
        try:
            if self._closed or self._ahead is not ahead:
                return
            os.set_blocking(self._requests, False)
            try:
                write_frame(self._requests, STOP, REQUEST_ID.pack(ahead.id))  # 9 bytes: whole or not at all
            except OSError:
                return  # (a full pipe, or it died: the pick's drop stops it, or finds it dead)
            finally:
                os.set_blocking(self._requests, True)
            self._ahead_stopped = ahead.id
        finally:
            self._writing.release()

    def drop_ahead(self) -> None:
        """Stop the request sent ahead, if any, and read its frames away (the engine thread, before it
        waits for work: a cancelled batch's next section is not made while nothing else is)."""
        ahead = self._take_ahead()
        if ahead is not None:
            self._drop(ahead.id)

    def _take_ahead(self) -> Request | None:
        if self._ahead is None:  # (no lock for nothing: only this thread sends one ahead)
            return None
        with self._writing:
            ahead, self._ahead = self._ahead, None
        return ahead

    def _drop(self, ahead: int) -> None:
        """Its `STOP` (unless `stop_ahead` sent it; bounded by the `STOP`'s deadline either way) and its
        frames up to its `END`, thrown away."""
        self._live = ahead
        try:
            if self._ahead_stopped != ahead:
                self._stop()
                return
            DEADLINES.arm(STOP_SECONDS, lambda: self._kill_if_still(ahead))
            try:
                while self._receive()[0] == AUDIO:
                    pass
            except EngineError:
                pass  # it died meanwhile: the next request starts another
        finally:
            self._live = None

    def _stop(self) -> None:  # (`ChildEspeak`'s)
        raise NotImplementedError

    def _receive(self, reading: bool = False) -> tuple[bytes, bytearray]:  # (`ChildEspeak`'s)
        raise NotImplementedError

    def _kill_if_still(self, live: int) -> None:  # (`ChildEspeak`'s)
        raise NotImplementedError

    def close(self) -> None:  # (`ChildEspeak`'s)
        raise NotImplementedError


class Unheard:
    """Whether a chunk of a request sent ahead was read: a child that dies with one sent ahead and none
    of its audio read may have died while idle, before it read that request (the case a request's
    write finds as `ChildGone`), so the request goes to another child, once; one that crashed on its
    text crashes that one too and fails as before (`UnparsableText`)."""

    __slots__ = ("heard", "_kept")

    def __init__(self) -> None:
        self.heard, self._kept = False, True

    def read(
        self, answers: FrameReader, sink: Callable[[np.ndarray], bool]
    ) -> tuple[bytes, bytearray] | None:
        """`answers.audio_into(AUDIO, sink)`, its first chunk through `_first` (a call a chunk for the
        rest was ≈ 14 calls a lecture section on the engine thread)."""
        last = answers.audio_into(AUDIO, lambda chunk: self._first(sink, chunk))
        if last is not None or not self._kept:
            return last  # (its end before any audio, or the sink stopped it)
        return answers.audio_into(AUDIO, sink)

    def _first(self, sink: Callable[[np.ndarray], bool], chunk: np.ndarray) -> bool:
        self.heard, self._kept = True, sink(chunk)
        return False  # (the rest read straight into `sink`)
