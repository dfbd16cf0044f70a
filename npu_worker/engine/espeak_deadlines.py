"""Deadlines on an espeak child's answers: a child that does not answer in time (stopped by SIGSTOP, a
hung host) is killed, so whoever waits on its pipe gets its end (an `EngineError`), never a wait for ever.

Why a thread: the waiting side blocks in a `read` of the child's pipe (or a `write` to a full one),
which has no timeout of its own; one daemon thread for the whole process, started at the first deadline,
ends such waits. A deadline is armed and cleared around a call (a lock and a dict entry each); the
thread sleeps until the nearest one and is woken only by a deadline nearer than that (one armed while
none is: a phonemize call or a cancel then costs it one wake-up), never by a clear. A callback that
raises is logged and the thread lives on (it died, and every later deadline of the process was never
served: a stopped child held its caller for ever again); a forked child starts over with none.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Deadlines:
    """`arm(seconds, expired)` → a token; `clear(token)` before then, or `expired()` runs on this
    class's thread (it must not block: a kill)."""

    def __init__(self) -> None:
        self._start_over()
        os.register_at_fork(after_in_child=self._start_over)

    def _start_over(self) -> None:
        """Empty, with no thread (a forked child has none, and the parent's deadlines are not its own)."""
        self._cond = threading.Condition()
        self._armed: dict[int, tuple[float, Callable[[], None]]] = {}
        self._tokens = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._wakes_at: float | None = None  # when the thread wakes by itself (None: only when told)

    def arm(self, seconds: float, expired: Callable[[], None]) -> int:
        with self._cond:
            token, at = next(self._tokens), time.monotonic() + seconds
            self._armed[token] = (at, expired)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="espeak-deadlines", daemon=True)
                self._thread.start()
            elif self._wakes_at is None or at < self._wakes_at:
                self._cond.notify()
            return token

    def clear(self, token: int) -> None:
        with self._cond:
            self._armed.pop(token, None)

    def _watch(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                due = [token for token, (at, _) in self._armed.items() if at <= now]
                expired = [self._armed.pop(token)[1] for token in due]
                if not expired:
                    self._wakes_at = min((at for at, _ in self._armed.values()), default=None)
                    self._cond.wait(None if self._wakes_at is None else self._wakes_at - now)
                    continue
            for call in expired:  # outside the lock: a kill's system call holds up no `arm`
                try:
                    call()
                except Exception:  # the thread serves every deadline of the process: it lives on
                    log.exception("an espeak deadline's callback failed")


DEADLINES = Deadlines()
