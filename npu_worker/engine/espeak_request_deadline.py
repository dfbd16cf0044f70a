"""A deadline on an espeak child's synthesis: while the engine thread waits for a request's next frame
(or its end), the child must answer within `ANSWER_SECONDS` and a little more a character of the text,
or it is killed. A child stopped mid-request (SIGSTOP, a hung host) held the section, its engine thread
or lane, and every request behind it, for ever (the caller's HTTP timeout ended the caller, not the work).

Why this shape: the clock runs only while the engine thread is blocked in its read, so a healthy child
is never killed for the time the thread spends elsewhere (handing chunks over; the child then waits on
its pipe); and one deadline is armed a request (a lock and a dict entry, as a cancel's `STOP`), not one
a frame: it fires only for a request still running `seconds` after it started, and is armed again from
the start of the wait then in progress. The reader (`espeak_frame_reader.FrameReader`) marks each read that
waits on the pipe with two stores and a clock read: a read takes several frames, and one a frame is cut
out of it with no mark.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..deadline_thread import Armed
from .espeak_deadlines import DEADLINES

# espeak-ng's worst case on 2 000 hostile characters (the text limit; digits read out in Korean, at speed
# 0.25: 34 min of audio) took 5.2–6.3 s whole on a busy 2-core VM, and 0.08 s at most between two frames
# (benchmarks/espeak_worst_case.py): a wait this long on one frame is a child that stopped, not a slow one.
ANSWER_SECONDS = 30.0
ANSWER_SECONDS_PER_CHAR = 0.005

# (what it did not answer, whether the read still waits on it): kills the child if so, under its lock
Overdue = Callable[[str, Callable[[], bool]], None]


class RequestDeadline:
    """One child's request deadline: `start` as a request is sent, `waiting_since` set by the reader
    (its `watch`) around each read of the pipe, `end` once it has ended (however)."""

    def __init__(self, overdue: Overdue) -> None:
        self._overdue = overdue
        self._lock = threading.Lock()  # `end` against the deadline arming itself again
        self._request: object | None = None
        self._token: Armed | None = None
        self._seconds = ANSWER_SECONDS
        self.waiting_since: float | None = None  # set by the reader: its read of the pipe began then

    def start(self, text_chars: int) -> None:
        request = object()
        seconds = ANSWER_SECONDS + ANSWER_SECONDS_PER_CHAR * text_chars
        with self._lock:
            self._request, self._seconds, self.waiting_since = request, seconds, None
            self._token = DEADLINES.arm(seconds, lambda: self._expired(request))

    def end(self) -> None:
        with self._lock:
            self._request, self.waiting_since = None, None
            token, self._token = self._token, None
        if token is not None:
            token.cancel()

    def _expired(self, request: object) -> None:
        """On the deadlines' thread: the request has run `seconds`; killed if its read has waited as
        long, else watched again until that read would have."""
        since, now = self.waiting_since, time.monotonic()
        seconds = self._seconds
        if since is not None and now - since >= seconds:
            what = f"its next audio within {round(seconds, 1):g} s"  # (30.1, not 30.065)
            self._overdue(what, lambda: self._request is request and self.waiting_since == since)
            return
        with self._lock:
            if self._request is not request:
                return  # ended meanwhile
            later = seconds if since is None else since + seconds - now
            self._token = DEADLINES.arm(later, lambda: self._expired(request))
