"""Retention on a Redis queue: the jobs this node accepted go after `--job-retention` or past
`--max-jobs-kept`, ended previews after PREVIEW_KEEP_SECONDS; and, past `--jobs-max-bytes`, the oldest
finished ones holding default outputs in this node's state dir (`make_room`, as on a local queue).

Apart from the scheduler because it is a loop of its own over what Redis lists as finished for this
node (`finished:<node>` and `finished:<node>:previews`): the scheduler only starts it and tells it
when a job may have ended.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from redis.exceptions import ResponseError

from ..job_bytes import JobBytes
from ..model import Job
from ..removals import RETENTION, ROOM, Removals
from .journal import RedisJournal
from .outage import REDIS_DOWN, refuses_every_write, reraise_if_cancelling
from .store import RedisJobs

log = logging.getLogger(__name__)
PREVIEW_KEEP_SECONDS = 30.0  # an ended preview's record and audio in Redis (its listeners are long done)
MAKE_ROOM_TIMEOUT = 30.0  # a writer waits this long for finished jobs to go, else its section fails


class ClusterRetention:
    def __init__(
        self,
        jobs: RedisJobs,
        node: str,
        journal: RedisJournal,
        removals: Removals,
        *,
        keep: float,
        most: int,
    ) -> None:
        self.jobs, self.node, self.journal, self.removals = jobs, node, journal, removals
        self.keep, self.most = keep, most  # --job-retention, --max-jobs-kept
        self.job_bytes: JobBytes | None = None  # this node's default outputs (`use_job_bytes`)
        self._making_room = asyncio.Lock()

    def use_job_bytes(self, job_bytes: JobBytes, loop: asyncio.AbstractEventLoop) -> None:
        """Bound `job_bytes` (this node's default outputs): a write that would pass it (on a writer or
        engine thread, never the loop) waits for `make_room` on the loop. Called on the loop's thread."""
        self.job_bytes = job_bytes
        loop_thread = threading.get_ident()

        def make_room(need: int) -> int:
            if threading.get_ident() == loop_thread:
                return 0  # never block the loop on itself
            future = asyncio.run_coroutine_threadsafe(self.make_room(need), loop)
            try:
                return future.result(MAKE_ROOM_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 - no room made: the section fails, WriteFailed
                future.cancel()  # and removes nothing later for a write that has failed
                log.warning("could not make room under --jobs-max-bytes: %r", exc)
                return 0

        job_bytes.make_room = make_room

    async def uncount_orphans(self) -> None:
        """At start: folders in this node's state dir of no job Redis knows (a local queue's jobs from
        before the node joined, a job whose record went while it was down) are never removed by it, so
        they stop counting against --jobs-max-bytes (`JobBytes.uncount`, a warning)."""
        job_bytes = self.job_bytes
        if job_bytes is None:
            return
        try:
            known = {job_id for job_id, _ in await self.jobs.finished(self.node)}
            orphans = [
                job_id
                for job_id in job_bytes.job_ids()
                if job_id not in known and (not job_id.isalnum() or await self.jobs.ended(job_id) is None)
            ]
        except (*REDIS_DOWN, ResponseError) as exc:  # counted as they are: a bound smaller, never a loss
            reraise_if_cancelling()
            log.warning("could not tell which files in the state dir are of no job: %r", exc)
            return
        job_bytes.uncount(orphans)

    async def make_room(self, need: int) -> int:
        """Remove the oldest finished jobs this node accepted that hold default outputs here, until
        they have freed `need` bytes; none when all of them together hold less. How many went."""
        job_bytes = self.job_bytes
        if job_bytes is None:
            return 0
        async with self._making_room:  # a writer and the engine thread: each job removed once
            finished = await self.jobs.finished(self.node)  # oldest first
            gone = job_bytes.oldest_freeing((job_id for job_id, _ in finished), need)
            if not gone:
                return 0
            for job_id in gone:
                self.removals.removed([job_id], ROOM)  # before: a 404 meanwhile says why
                await self._remove_id(job_id)
        log.info(
            "removed %d finished job(s) to keep the default outputs under --jobs-max-bytes (%d bytes)",
            len(gone),
            job_bytes.max_bytes,
        )
        return len(gone)

    async def _remove_id(self, job_id: str) -> None:
        job = await self.jobs.load(job_id)
        if job is None:  # its record is gone (expired, evicted, deleted by hand): its files here are not
            await self.jobs.forget(job_id, self.node)
            await asyncio.get_running_loop().run_in_executor(None, self._remove_files, job_id)
        else:
            await asyncio.get_running_loop().run_in_executor(None, self._remove, job)

    async def run(self) -> None:
        while True:
            await self.sweep()
            # redis-py may retry away a cancellation that hit a pass (a node stopped just after its
            # start): the task slept on, and the node's stop waited for it for ever
            reraise_if_cancelling()
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
                self.removals.removed([job_id], RETENTION)  # before: a 404 meanwhile says why
                await self._remove_id(job_id)
            job_bytes = self.job_bytes
            if job_bytes is not None and 0 < job_bytes.max_bytes < job_bytes.total:  # a bound lowered since
                await self.make_room(job_bytes.total - job_bytes.max_bytes)
        except REDIS_DOWN as exc:
            reraise_if_cancelling()
            log.info("retention skipped: Redis unreachable (%s)", exc)
        except (
            ResponseError
        ) as exc:  # a value not of ours (WRONGTYPE): this pass only, not retention for good
            if refuses_every_write(exc):  # (a replica: READONLY; the consumers say when it starts and ends)
                log.info("retention skipped: Redis refuses every write for now (%s)", exc)
            else:
                log.error("retention skipped: Redis answered %s", exc)

    def _remove(self, job: Job) -> None:
        self.journal.remove(job)
        if self.job_bytes is not None:
            self.job_bytes.recount_job(job.id)

    def _remove_files(self, job_id: str) -> None:
        """The default outputs a job whose record is gone left on this node's disk (by the names this
        node writes): counted against --jobs-max-bytes, they were never removed, so the bound filled
        with bytes no removal could free and every later section failed (WriteFailed)."""
        if not job_id.isalnum():  # a value not of ours in the list: never a path
            return
        store = self.journal.store
        try:
            store.remove(job_id, store.default_outputs_left(job_id))
        except OSError as exc:
            log.warning("could not remove the files of job %s: %s", job_id, exc)
        if self.job_bytes is not None:
            self.job_bytes.recount_job(job_id)
