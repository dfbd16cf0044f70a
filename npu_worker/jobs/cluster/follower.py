"""Following a shared job's log on this node: one XREAD BLOCK loop per job, however many listeners.

The follower folds each new entry into a local `Job` and publishes it, so `Subscription` (replay from
`after`, then live) works unchanged on any node. It survives Redis outages (listeners get heartbeats
meanwhile) and ends at `done`, when nobody has listened for a while, or when the job is gone from Redis.
"""

from __future__ import annotations

import asyncio
import logging

from ..model import Job, apply_event
from .store import REDIS_DOWN, RedisJobs, reraise_if_cancelling

log = logging.getLogger(__name__)


class Followers:
    def __init__(self, jobs: RedisJobs, block_ms: int = 2000) -> None:
        self.jobs = jobs
        self.block_ms = block_ms
        self._live: dict[str, Job] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def attach(self, job: Job) -> Job:
        """The local copy listeners should read: the followed one if there is one, else `job`
        (followed from now on unless it has ended)."""
        live = self._live.get(job.id)
        if live is not None:
            return live
        if job.finished:
            return job
        self._live[job.id] = job
        task = asyncio.create_task(self._follow(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    async def _follow(self, job: Job) -> None:
        delay, idle = 0.05, 0
        try:
            while not job.finished and idle < 2:
                try:
                    entries = await self.jobs.read_log(job.id, job.next_seq - 1, self.block_ms)
                except REDIS_DOWN as exc:
                    reraise_if_cancelling()
                    log.debug("following job %s: Redis unreachable (%s)", job.id, exc)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                delay = 0.05
                idle = 0 if job.subscribers else idle + 1
                if not entries and await self.jobs.spec(job.id) is None:
                    self._lost(job)
                    return
                for entry in entries:
                    if entry.seq < job.next_seq:
                        continue
                    apply_event(job, entry.event)
                    job.next_seq = entry.seq + 1
                    job.publish(entry)
        finally:
            self._live.pop(job.id, None)

    @staticmethod
    def _lost(job: Job) -> None:
        """The job is gone from Redis (restarted without persistence): end its streams without `done`;
        a client that re-attaches is told `JobNotFound`."""
        log.warning("job %s is no longer in Redis; ending its streams", job.id)
        for subscriber in list(job.subscribers):
            subscriber.close()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
