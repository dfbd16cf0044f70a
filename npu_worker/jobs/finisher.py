"""The finisher thread: ends the sections of file-only jobs while the engine thread makes the next one.

Why: after the engine, a batch section still costs its wav encode, the atomic file write and its log
events (about a third of a short section's time on two cores), and on the engine thread that work ran
one after another with the synthesis. Here it runs beside it, and in the order it was handed over, so a
job's log reads exactly as before (`synth`, `ok`, the next `synth`, ..., `done`): every event of such a
job after `start` is appended by this thread. The queue is bounded, so a slow disk holds the engine
back instead of piling up audio in memory.

The engine thread's hand-overs are held (`hold`) until the next section's request is on its way to the
engine (`release`: espeak's child makes it meanwhile; before the call, for an engine that cannot say so),
the thread would wait for work, or a preview run inside a paused section has ended: handed over at a section's end,
they woke this thread while the engine thread made the next request, and its wav and events took the
GIL in that gap, the espeak child idle (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 61).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

DEPTH = 8  # sections made and not yet ended, at most: then the engine thread waits
HELD_MOST = 8  # hand-overs held at most (sections that fail before their request is sent release none)


class Finisher:
    def __init__(self, depth: int = DEPTH) -> None:
        self._queue: queue.Queue[tuple[Callable[..., object], tuple[Any, ...]] | None] = queue.Queue(depth)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # a hand-over and the close: none lands behind the close
        self._closed = False
        self._held: list[tuple[Callable[..., object], tuple[Any, ...]]] = []  # the engine thread's

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="npu-worker-finisher", daemon=True)
        self._thread.start()

    def submit(self, work: Callable[..., object], *args: Any) -> None:
        """Run `work(*args)` on the finisher thread after everything submitted before it; once closed,
        on the caller, after the thread has done what it had: the engine thread closes it when it
        stops, and a preview lane may still end a `/synth` after that (queued behind the close, its
        file, `ok` and `done` never came: its caller was answered `Cancelled`)."""
        with self._lock:
            if not self._closed:
                self._queue.put((work, args))
                return
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        work(*args)

    def hold(self, work: Callable[..., object], *args: Any) -> None:
        """`submit` it at the next `release`, after what was held before it (the engine thread only)."""
        self._held.append((work, args))
        if len(self._held) >= HELD_MOST:
            self.release()

    def release(self) -> None:
        """What `hold` kept, handed over as one item: one wake-up of the thread, in the same order."""
        if self._held:
            held, self._held = self._held, []
            self.submit(_each, held)

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def close(self) -> None:
        """No more work for the thread: it ends once it has done what is queued."""
        with self._lock:
            self._closed = True
            self._queue.put(None)

    @property
    def idle(self) -> bool:
        """Nothing handed over is still to do. Read without a lock by each thread that hands work over
        (the engine thread, and the preview lanes for the sections they make: `Runner._then`), for
        the job it is ending: another thread's later hand-over is another job's, or that job's next
        section's, handed out only after this thread has handed over what comes before it."""
        return not self._held and self._queue.unfinished_tasks == 0

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            work, args = item
            try:
                work(*args)
            except Exception:  # noqa: BLE001 - one section's end must not stop the others'
                log.exception("ending a section failed")
            finally:
                self._queue.task_done()


def _each(held: list[tuple[Callable[..., object], tuple[Any, ...]]]) -> None:
    """Held hand-overs in order, each as `_work` runs one: a failure logged, the others done."""
    for work, args in held:
        try:
            work(*args)
        except Exception:  # noqa: BLE001 - one section's end must not stop the others'
            log.exception("ending a section failed")
