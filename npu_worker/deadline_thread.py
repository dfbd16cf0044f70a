"""One thread per process that runs actions at their deadlines: the sync client's `Deadline`, and the
espeak children's (`engine/espeak_deadlines.py`: a child that stops answering is killed).

Why not a `threading.Timer` per deadline: the sync client arms one for every stream line and answer,
and a thread started per line made a flood of heartbeat lines cost ≈ 70 µs of CPU a line. Arming and
cancelling here is a heap push under a lock: 2.3–2.4 µs of CPU against 72–75 µs for a Timer (20 000
`Deadline`s on a socket pair, two rounds, one ad-hoc run on the 2-core VM while other work ran). The
one daemon thread sleeps until the earliest deadline.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)
COMPACT_AFTER = 1024  # cancelled entries kept before the heap is compacted


class Armed:
    """A pending action; `cancel()` before its deadline and it never runs."""

    __slots__ = ("action", "cancelled", "_watchdog")

    def __init__(self, action: Callable[[], object], watchdog: Watchdog) -> None:
        self.action = action
        self.cancelled = False
        self._watchdog = watchdog

    def cancel(self) -> None:
        self._watchdog.cancel(self)


class Watchdog:
    """Deadlines of the whole process; the thread starts at the first one (again in a forked child)."""

    def __init__(self, name: str = "npu-worker-deadlines") -> None:
        self._name = name  # the thread's, as `ps -L` and py-spy show it
        self._order = itertools.count()  # ties broken by arming order (Armed is not comparable)
        self._start_over()
        os.register_at_fork(after_in_child=self._start_over)

    def _start_over(self) -> None:
        """Empty, with no thread (a forked child has none, and the parent's deadlines are not its own)."""
        # The lock taken as itself where nothing waits (`arm`, `cancel`: each espeak request's): a
        # condition's `__enter__` and `__exit__` are two Python calls more (benchmarks/SERVER_OVERHEAD.md, stop 55).
        self._lock = threading.RLock()
        self._condition = threading.Condition(self._lock)
        self._heap: list[tuple[float, int, Armed]] = []
        self._cancelled = 0  # entries of the heap cancelled before their deadline
        self._running = False

    def arm(self, seconds: float, action: Callable[[], object]) -> Armed:
        armed = Armed(action, self)
        with self._lock:
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name=self._name, daemon=True).start()
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._order), armed))
            if self._heap[0][2] is armed:  # sooner than what the thread sleeps until
                self._condition.notify()
        return armed

    def __len__(self) -> int:
        """Entries held, cancelled ones not yet dropped included."""
        with self._lock:
            return len(self._heap)

    def cancel(self, armed: Armed) -> None:
        """Cancelled entries leave the heap when it is more than half theirs: a peer sending a line at a
        time would otherwise fill it with one entry a line for the read timeout's length (120 s)."""
        with self._lock:
            if armed.cancelled:
                return
            armed.cancelled = True
            self._cancelled += 1
            if self._cancelled > COMPACT_AFTER and 2 * self._cancelled > len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2].cancelled]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._heap and self._heap[0][2].cancelled:  # ended calls: dropped unseen
                    heapq.heappop(self._heap)
                    self._cancelled -= 1
                if not self._heap:
                    self._condition.wait()
                    continue
                when, _, armed = self._heap[0]
                left = when - time.monotonic()
                if left > 0:
                    self._condition.wait(left)
                    continue
                heapq.heappop(self._heap)
                armed.cancelled = True  # (ran: a late cancel counts nothing)
            try:
                armed.action()
            except Exception:  # the thread serves every deadline of the process: it lives on
                log.exception("a deadline's action failed (%s)", self._name)


WATCHDOG = Watchdog("npu-worker-client-deadlines")  # the sync client's
