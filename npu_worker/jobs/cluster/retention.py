"""Retention on a Redis queue: the jobs this node accepted go after `--job-retention` or past
`--max-jobs-kept`, ended previews after PREVIEW_KEEP_SECONDS.

Apart from the scheduler because it is a loop of its own over what Redis lists as finished for this
node (`finished:<node>` and `finished:<node>:previews`): the scheduler only starts it and tells it
when a job may have ended.
"""

from __future__ import annotations

import asyncio
import logging

from redis.exceptions import ResponseError

from ..model import Job
from ..stats import Stats
from .journal import RedisJournal
from .outage import REDIS_DOWN, reraise_if_cancelling
from .store import RedisJobs

log = logging.getLogger(__name__)
PREVIEW_KEEP_SECONDS = 30.0  # an ended preview's record and audio in Redis (its listeners are long done)


class ClusterRetention:
    def __init__(
        self, jobs: RedisJobs, node: str, journal: RedisJournal, stats: Stats, *, keep: float, most: int
    ) -> None:
        self.jobs, self.node, self.journal, self.stats = jobs, node, journal, stats
        self.keep, self.most = keep, most  # --job-retention, --max-jobs-kept

    async def run(self) -> None:
        while True:
            await self.sweep()
            await asyncio.sleep(60.0)

    async def sweep_if_ended(self, job_id: str) -> None:
        """After a section's file was written here: a job that has ended may let an older one go."""
        try:
            found = await self.jobs.spec(job_id)
        except REDIS_DOWN:
            reraise_if_cancelling()
            return
        if found is not None and found[1]:
            await self.sweep()

    async def sweep(self) -> None:
        """Retention of the jobs this node accepted (`--job-retention`, `--max-jobs-kept`); previews,
        which no one can look up, are not counted and go PREVIEW_KEEP_SECONDS after they ended."""
        keep, most = self.keep, self.most
        try:
            rows = await self.jobs.finished(self.node)
            now, over = await self.jobs.now(), max(0, len(rows) - most) if most > 0 else 0
            gone = [
                job_id for pos, (job_id, ended) in enumerate(rows) if pos < over or 0 < keep < now - ended
            ]
            previews = await self.jobs.finished(self.node, previews=True)
            for job_id in [job_id for job_id, ended in previews if now - ended > PREVIEW_KEEP_SECONDS]:
                job = await self.jobs.load(job_id)
                if job is None:
                    await self.jobs.forget(job_id, self.node)
                else:
                    await self.jobs.remove(job, self.node)
            for job_id in gone:
                job = await self.jobs.load(job_id)
                if job is None:
                    await self.jobs.forget(job_id, self.node)
                else:
                    await asyncio.get_running_loop().run_in_executor(None, self._remove, job)
            if gone:
                self.stats.count("jobs_removed", len(gone))
        except REDIS_DOWN as exc:
            reraise_if_cancelling()
            log.info("retention skipped: Redis unreachable (%s)", exc)
        except (
            ResponseError
        ) as exc:  # a value not of ours (WRONGTYPE): this pass only, not retention for good
            log.error("retention skipped: Redis answered %s", exc)

    def _remove(self, job: Job) -> None:
        self.journal.remove(job)
