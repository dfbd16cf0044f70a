"""One bound on the request-body bytes the whole worker holds at once (`--body-budget-bytes`).

Each body is bounded alone (`--max-body-bytes`), but every connection may hold one while it arrives:
512 connections × 8 MiB was about 4 GiB a few hostile callers could make the worker hold, each body
under its own limit. Every body being read (`read_body`, a voice upload) and every WebSocket message
still arriving (`ws_server/message_deadline.py`) holds its bytes here as they come; a request
waiting for a voice-decode slot (`decode_slots.py`) holds its audio's. A body that needs
more than is left first makes room by dropping the body that has been arriving longest, for at least
SLOW_BODY_SECONDS (a lecture batch sent at once arrives within milliseconds; bodies held open are
trickled), the way the connection cap evicts a slow body (a request waiting in line is not dropped
for another waiting in line); if dropping all those that old would not
make room, none is dropped and it is refused with `BodyBudgetFull` (503, `Retry-After`). A dropped body's reader is refused the same way.

Pure bookkeeping on the event loop's thread (no lock): the readers call `grow`/`close`; what dropping
a body means (its reader refused, its connection cut) is the `drop` callback each reader gives.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from .errors import BodyBudgetFull, WorkerError

# A body still arriving this long may be dropped to make room for another (`open_connections`' figure).
SLOW_BODY_SECONDS = 1.0
RETRY_AFTER_SECONDS = 1  # a dropped trickle frees its bytes at once; a burst of honest bodies, soon


class BodyBudget:
    """The bytes every body being received holds, against `total`."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.held = 0
        self.dropped = 0  # bodies dropped to make room (for /metrics and tests)
        self.refused = 0  # bodies refused for want of room
        self._holds: OrderedDict[BodyHold, None] = OrderedDict()  # oldest first

    def hold(self, drop: Callable[[WorkerError], object], *, in_line: bool = False) -> BodyHold:
        """A new body's share, empty until it `grow`s; `drop(error)` is called if it is dropped.
        `in_line`: the bytes of a request waiting in line (for a decode slot), not of a body arriving."""
        return BodyHold(self, drop, in_line)

    def has_room(self, size: int) -> bool:
        """Whether a body of `size` bytes would find room now, dropping what may be dropped (a caller
        that waits for `100 Continue` is told before it sends the body)."""
        return self.held - self._droppable() + size <= self.total

    def _droppable(self, asking: BodyHold | None = None) -> int:
        """The bytes dropping every body arriving for SLOW_BODY_SECONDS (but `asking`) would free."""
        since = time.monotonic() - SLOW_BODY_SECONDS
        droppable = 0
        for hold in self._holds:  # in arrival order
            if hold.since > since:
                break
            if not _spared(hold, asking):
                droppable += hold.size
        return droppable

    def _take(self, hold: BodyHold, size: int) -> None:
        # (only when dropping makes room: else a slow body was lost and this one refused all the same)
        if (needed := self.held + size - self.total) > 0 and self._droppable(hold) >= needed:
            self._make_room(hold, needed)
        if self.held + size > self.total:
            self.refused += 1
            raise BodyBudgetFull(
                f"the worker holds {self.held} bytes of request bodies being received "
                f"(--body-budget-bytes {self.total}); send it again shortly"
            )
        if hold.size == 0:  # its clock starts with its first byte held
            hold.since = time.monotonic()
            self._holds[hold] = None
        hold.size += size
        self.held += size

    def _make_room(self, asking: BodyHold, needed: int) -> None:
        """Drop the bodies arriving longest (for SLOW_BODY_SECONDS at least) until `needed` is free."""
        since = time.monotonic() - SLOW_BODY_SECONDS
        for oldest in list(self._holds):  # in arrival order
            if needed <= 0 or oldest.since > since:
                return  # (every later one came after it)
            if _spared(oldest, asking):
                continue
            needed -= oldest.size
            self.dropped += 1
            oldest.dropped = True
            oldest.release()
            oldest.drop(
                BodyBudgetFull(
                    f"the body was still arriving after {SLOW_BODY_SECONDS:g} s while the worker's "
                    f"budget for bodies being received (--body-budget-bytes {self.total}) was spent; "
                    "send it again, at once"
                )
            )

    def _release(self, hold: BodyHold) -> None:
        self.held -= hold.size
        hold.size = 0
        self._holds.pop(hold, None)


def _spared(hold: BodyHold, asking: BodyHold | None) -> bool:
    """`hold` is not dropped to make room for `asking`: it is `asking` (growing), or both wait in line,
    where the bytes of both are in memory whichever is refused: the head of the line would only lose its
    place to the tail."""
    return hold is asking or (asking is not None and asking.in_line and hold.in_line)


class BodyHold:
    """One body's (or one WebSocket message's, or one waiting request's) bytes in the budget."""

    def __init__(self, budget: BodyBudget, drop: Callable[[WorkerError], object], in_line: bool) -> None:
        self.budget = budget
        self.drop = drop
        self.in_line = in_line
        self.size = 0
        self.since = 0.0
        self.dropped = False

    def grow(self, size: int) -> None:
        """`size` more bytes arrived; BodyBudgetFull if neither the budget nor dropping older bodies
        has room (the caller then refuses its body). A dropped hold grows no more."""
        if self.dropped:
            raise BodyBudgetFull("the body was dropped to make room for others; send it again")
        if size > 0:
            self.budget._take(self, size)

    def release(self) -> None:
        """The body is read whole (or given up): its bytes leave the budget; it may grow again (a
        WebSocket's next message), with a new clock."""
        self.budget._release(self)

    def resize(self, size: int) -> None:
        """Hold exactly `size` bytes now (a WebSocket's unfinished message, as counted)."""
        if size <= 0:
            self.release()
        elif size > self.size:
            self.grow(size - self.size)
