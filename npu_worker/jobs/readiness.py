"""What the scheduler can take now and what it says meanwhile: the engine's load, the reading of
the kept jobs, a failure of either (`/health`, the refusals of every request), and the counters.

The base of `Scheduler` (scheduler.py wires the parts; `ending.py` and `listening.py` build on this):
apart because it only reads the parts' state and decides which refusal a caller gets.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..engine.base import DecoderCalls, EngineInfo
from ..errors import SHUTTING_DOWN_REASON
from ..protocol import JobNotFound, Loading, QueueFull, WorkerError
from .admission import Admission
from .loop_handoff import call_soon_unless_closed
from .model import Job, KeptJob
from .recovery import Recovery
from .registry import JobRegistry
from .runner import Runner
from .stats import Stats


class LoadSignal:
    """Where the load stands may have changed (the engine loaded or failed, the kept jobs were read, the
    shutdown began): what waits for the load (`next_change`) wakes and reads `info` again, where it
    looked every 50 ms. `changed` may be called from any thread; the waking runs on the loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next: asyncio.Event | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def changed(self) -> None:
        if self._loop is not None:
            call_soon_unless_closed(self._loop, self._wake)

    def _wake(self) -> None:
        if self._next is not None:
            self._next.set()
            self._next = None

    def next_change(self) -> asyncio.Event:
        """Set at the next change: taken on the loop after reading the state, so no change is missed."""
        self._loop = self._loop or asyncio.get_running_loop()
        if self._next is None:
            self._next = asyncio.Event()
        return self._next


class Readiness:
    """The parts it reads, set by `Scheduler.__init__` and `start`."""

    load_signal: LoadSignal
    admission: Admission
    registry: JobRegistry
    recovery: Recovery
    runner: Runner | None
    stats: Stats

    @property
    def info(self) -> EngineInfo | None:
        """What runs, once the engine has loaded and the kept jobs are read (None: still loading)."""
        if self.runner is None or self.recovery.running:
            return None
        return self.runner.info

    @property
    def load_error(self) -> WorkerError | None:
        if self.recovery.error is not None:
            return self.recovery.error
        return self.runner.load_failure if self.runner is not None else None

    @property
    def load_seconds(self) -> float | None:
        return self.runner.load_seconds if self.runner is not None else None

    @property
    def load_phase(self) -> str | None:
        phase = self.runner.load_phase if self.runner is not None else None
        return phase or self.recovery.phase

    @property
    def decoder_calls(self) -> DecoderCalls | None:
        return self.runner.decoder_calls if self.info is not None and self.runner is not None else None

    def loading(self) -> WorkerError:
        """The refusal while `info` is None: the engine loads, or the kept jobs are still being read."""
        if self.runner is not None and self.runner.info is not None and self.recovery.running:
            return self.recovery.refusal()
        return Loading("the engine is still loading; retry shortly")

    def check_jobs_readable(self) -> None:
        """Loading while the kept jobs are read: a job not read yet is not unknown. Once they could not
        be read, what `/health` says (`StateUnavailable`): a job missed was a 404 that read as gone."""
        if self.recovery.running:
            raise self.recovery.refusal()
        if self.recovery.error is not None:
            raise self.recovery.error

    def check_runnable(self, job: Job | KeptJob) -> None:
        """What `/health` says (`ModelLoadError`, 500) for an unfinished job of a worker whose engine
        failed to load: it never runs here, yet a poll said `interrupted` and a stream sent heartbeats
        for ever. The job stays on disk as it was: a restart that loads resumes it."""
        if self.load_error is not None and not job.finished:
            raise self.load_error

    def stream_lost(self, job: Job) -> WorkerError:
        """What a caller waiting on `job` is told when its events end without `done` (a shutdown
        apart): the engines' failure when they all failed to load (with `--queue redis`: their streams
        are ended), else the job is gone (a Redis that lost it)."""
        if self.load_error is not None:
            return self.load_error
        return JobNotFound(f"job {job.id} is gone from the shared queue; send it again")

    def _end_unrunnable_streams(self) -> None:
        """The engine failed to load: the open streams of the kept jobs end (without `done`: a
        re-attach is answered `check_runnable`'s refusal) instead of sending heartbeats for ever."""
        for job in [*self.admission.live_jobs(), *self.registry.snapshot()]:
            if isinstance(job, Job):
                for subscription in list(job.subscribers):
                    subscription.finish()

    @property
    def draining(self) -> bool:
        """True once shutdown began: no new section starts."""
        return self.admission.stopping

    @property
    def loaded(self) -> bool:
        return self.info is not None

    @property
    def ttfa_ms(self) -> list[float]:
        return self.stats.ttfa_ms()

    def queue_size(self) -> int:
        return self.admission.queue_size()

    def jobs_running(self) -> int:
        return self.admission.jobs_running()

    def stats_snapshot(self) -> dict[str, Any]:
        """Counters for /health and metrics (cheap; safe from any thread)."""
        return {
            **self.stats.snapshot(),
            "queue": self.queue_size(),
            "jobs_running": self.jobs_running(),
            "jobs_kept": len(self.registry),
        }

    async def queue_health(self) -> dict[str, Any]:
        """What /health says about where jobs live (the Redis scheduler adds the cluster view)."""
        return {"queue_backend": "local"}

    def check_accepting(self) -> None:
        """Raise what every request would get now (Loading, ModelLoadError, QueueFull once shutdown
        began, as `/ready` says in that order): a request of several parts (an OpenAI batch) is refused
        whole instead of failing part by part."""
        if self.load_error is not None:
            raise self.load_error
        if self.info is None:
            raise self.loading()
        if self.draining:
            raise QueueFull(SHUTTING_DOWN_REASON)
