"""Stopping an onnxruntime call from another thread, so nobody waits for a call whose work is unwanted.

A ZipVoice decoder call takes up to ~0.7 s on 2 cores; without this, a cancelled preview kept the
engine until its call ended, and a preview arriving during a batch section waited for the section's
call. Every session the engine runs is wrapped in a `GuardedSession`, whose `run` gives the call its
own `RunOptions` and registers it as the call in flight; `Calls.interrupt` sets `terminate` on it.
onnxruntime checks that flag between nodes and fails the run, and `run` raises `Interrupted` instead.
A graph that runs as one QNN node is checked only before and after it (an NPU call is short anyway).

Two reasons to stop a call. A cancel: its work is unwanted, any call goes. A preemption: the call
is run again afterwards (a decoder step keeps its input, so the redo gives the same samples), so it
is stopped only while less than half of its expected time has passed; later, waiting for its end
costs the preview less than the batch would lose.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .base import Interrupted

__all__ = ["Calls", "GuardedSession", "Interrupted"]

SHAPES_KEPT = 64  # a segment's steps share one shape; a bucketed decoder has a handful


@dataclass
class _Call:
    options: Any  # onnxruntime.RunOptions
    started: float
    expected: float | None  # seconds the same call took last time (restartable calls only)
    restartable: bool


class Calls:
    """The engine's onnxruntime calls, one at a time (the engine thread), stoppable from any thread."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        import onnxruntime as ort

        self._run_options = ort.RunOptions
        self._clock = clock
        self._lock = threading.Lock()
        self._current: _Call | None = None
        # last duration per (session, input shapes), the newest SHAPES_KEPT (CPU shapes vary per segment)
        self._seconds: dict[tuple[Any, ...], float] = {}
        self.interrupted = 0  # calls stopped so far (benchmarks, tests)

    def run(self, session: Any, names: Any, feed: Mapping[str, Any], restartable: bool) -> list[np.ndarray]:
        key = (id(session), *(np.shape(value) for value in feed.values())) if restartable else None
        expected = self._seconds.get(key) if key is not None else None
        call = _Call(self._run_options(), self._clock(), expected, restartable)
        with self._lock:
            self._current = call
        try:
            outputs = session.run(names, feed, call.options)
        except Exception:
            if call.options.terminate:
                raise Interrupted("the onnxruntime call was stopped before it finished") from None
            raise
        finally:
            with self._lock:
                self._current = None
        if key is not None:
            self._seconds.pop(key, None)
            self._seconds[key] = self._clock() - call.started
            if len(self._seconds) > SHAPES_KEPT:
                del self._seconds[next(iter(self._seconds))]
        return outputs

    @property
    def in_flight(self) -> bool:
        with self._lock:
            return self._current is not None

    def interrupt(self, restart: bool) -> bool:
        """Stop the call in flight, if any: any call when `restart` is False (a cancel); when True (it
        will be run again), only a restartable call that has run less than half its expected time.
        True if a call was told to stop."""
        with self._lock:
            call = self._current
            if call is None:
                return False
            if restart:
                if not call.restartable or call.expected is None:
                    return False
                if self._clock() - call.started > call.expected / 2:
                    return False
            call.options.terminate = True
            self.interrupted += 1
            return True


class GuardedSession:
    """An InferenceSession whose `run` goes through `calls`; everything else is the session's own."""

    def __init__(self, session: Any, calls: Calls, restartable: bool = False) -> None:
        self.session = session
        self.calls = calls
        self.restartable = restartable

    def run(self, names: Any, feed: Mapping[str, Any], run_options: Any = None) -> list[np.ndarray]:
        if run_options is not None:  # a caller with its own options keeps them (and is not stoppable)
            return self.session.run(names, feed, run_options)
        return self.calls.run(self.session, names, feed, self.restartable)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)
