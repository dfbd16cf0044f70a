"""The threads that run the admissions `Scheduler.submit` does not await (a `/synth`'s `quiet_admission`).

Why not a `ThreadPoolExecutor`: nothing waits for such an admission's result (a refusal is kept on its
job, `Job.refusal`), yet the executor made a `Future` a call, with its `Condition`, and set it when the
call ended: ≈ 10 Python calls on the loop and ≈ 10 on the admitting thread a `/synth`, for a result
nobody read (benchmarks/SERVER_OVERHEAD.md, stop 61). Here a call is a queue entry: a thread is started
when none is free, up to `most`, as the executor did.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class Admitters:
    def __init__(self, most: int, name: str) -> None:
        self._calls: queue.SimpleQueue[tuple[Callable[..., object], tuple[Any, ...]] | None]
        self._calls = queue.SimpleQueue()
        self._most, self._name = most, name
        self._lock = threading.Lock()  # the counts below and the close
        self._started = 0
        self._free = 0  # threads done with a call and not yet promised another
        self._pending = 0  # calls submitted and not yet ended (`pending`)
        self._closed = False

    def submit(self, call: Callable[..., object], *args: Any) -> None:
        """Run `call(*args)` on a free thread, or a new one while fewer than `most` run; else after the
        calls queued before it. Its result is dropped and its error logged: the call keeps its own."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the admitting threads are shut down")
            self._calls.put((call, args))
            self._pending += 1
            if self._free:
                self._free -= 1
                return
            if self._started < self._most:
                self._started += 1
                name = f"{self._name}_{self._started - 1}"
                threading.Thread(target=self._work, name=name, daemon=True).start()

    def pending(self) -> int:
        """Calls submitted whose end has not come: admissions under way, whose jobs `/health` counts
        as running (it said idle while a hung-up `/synth` was still to be admitted, and a bench run's
        end took that for the worker having nothing left to write). A call's job may be live already
        as it ends: counted twice for that moment, never missed."""
        with self._lock:
            return self._pending

    def shutdown(self) -> None:
        """No more calls; each thread ends once the calls queued before this are done."""
        with self._lock:
            self._closed = True
            for _ in range(self._started):
                self._calls.put(None)

    def _work(self) -> None:
        while (item := self._calls.get()) is not None:
            call, args = item
            try:
                call(*args)
            except Exception:  # noqa: BLE001 - one admission's bug must not stop the thread
                log.exception("an admission off the loop failed")
            with self._lock:
                self._free += 1
                self._pending -= 1
