"""Following a shared job's log on this node: one XREAD BLOCK loop per job, however many listeners.

The follower folds each new entry into a local `Job` and publishes it, so `Subscription` (replay from
`after`, then live) works unchanged on any node. It survives Redis outages (listeners get heartbeats
meanwhile) and ends at `done`, when nobody has listened for a while, or when the job is gone from Redis.

A job whose audio is listened to (a `/ws` preview, an OpenAI speech request) is followed with its PCM
stream in the same read (`pcm_stream.py`): chunks are published as they arrive, and an event about a
section waits until the audio before it has been passed on (`pcm_follow.py`), so listeners see the
order a local queue gives (a section's audio, then its `ok`). On a `both` node, the chunks its own engine
makes also arrive here directly (`local_pcm`), one Redis round trip sooner; their copies in the stream
are then dropped as already passed on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from redis.exceptions import ResponseError

from ...protocol import Done
from ..model import AudioChunk, Job, LogEntry, apply_event
from . import pcm_stream
from .outage import REDIS_DOWN, lost_groups, refuses_every_write, reraise_if_cancelling, skippable
from .pcm_follow import PcmFollow
from .pcm_stream import PcmEntry
from .store import RedisJobs

log = logging.getLogger(__name__)


class Followers:
    def __init__(
        self, jobs: RedisJobs, block_ms: int = 2000, on_first_audio: Callable[[Job], None] | None = None
    ) -> None:
        self.jobs = jobs
        self.block_ms = block_ms
        self.on_first_audio = on_first_audio  # this node's TTFA figures (the job was accepted here)
        self._live: dict[str, Job] = {}
        self._audio: dict[str, tuple[Job, PcmFollow]] = {}  # jobs whose PCM is followed here
        self._tasks: set[asyncio.Task[None]] = set()  # follow loops and their stream trims

    def live_jobs(self) -> list[Job]:
        """The jobs followed now (their listeners read these copies)."""
        return list(self._live.values())

    def attach(self, job: Job, *, audio: bool = False, on_lost: Callable[[Job], None] | None = None) -> Job:
        """The local copy listeners should read: the followed one if there is one, else `job`
        (followed from now on unless it has ended). With `audio`, its PCM stream is followed too;
        `on_lost(job)` runs if PCM entries were trimmed before they could be read."""
        live = self._live.get(job.id)
        if live is not None:
            return live
        if job.finished:
            return job
        self._live[job.id] = job
        pcm = PcmFollow(job) if audio else None
        if pcm is not None:
            self._audio[job.id] = (job, pcm)
        self._background(self._follow(job, pcm, on_lost))
        return job

    async def _follow(self, job: Job, pcm: PcmFollow | None, on_lost: Callable[[Job], None] | None) -> None:
        delay, idle = 0.05, 0
        read, held = job.next_seq - 1, list[LogEntry]()  # the log read so far; entries waiting for audio
        try:
            while not job.finished and idle < 2:
                reraise_if_cancelling()  # redis-py may retry away a cancellation that hit a read
                try:
                    entries, audio, more = await self._read(job, read, pcm)
                    gone = not entries and not audio and await self.jobs.spec(job.id) is None
                except (*REDIS_DOWN, ResponseError) as exc:
                    reraise_if_cancelling()
                    if not self._read_again(job, exc):
                        return
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                except (KeyError, ValueError) as exc:  # an entry not of ours: as lost, never a silent hang
                    log.warning("job %s: an entry in Redis does not decode (%s)", job.id, exc)
                    self._lost(job)
                    return
                delay = 0.05
                idle = 0 if job.subscribers else idle + 1
                if gone:
                    self._lost(job)
                    return
                fresh = [e for e in entries if e.seq > read]
                read = fresh[-1].seq if fresh else read
                held = self._release(job, held + fresh, pcm, more=True)  # what precedes this audio
                if pcm is not None:
                    self._publish_chunks(job, pcm.feed(audio))
                    held = self._release(job, held, pcm, more)  # what this audio completed
                if pcm is not None and pcm.lost and on_lost is not None:
                    on_lost(job)
                    on_lost = None
                if pcm is not None and pcm.closed_at is not None:  # beside the next read, not before it
                    self._background(self._trim(job.id, pcm.closed_at))
                    pcm.closed_at = None
            if pcm is not None:  # its one listener has it all, or has gone
                await skippable(
                    lambda: pcm_stream.drop(self.jobs, job.id), f"job {job.id}: its PCM's removal"
                )
        finally:
            self._live.pop(job.id, None)
            self._audio.pop(job.id, None)

    def _read_again(self, job: Job, exc: BaseException) -> bool:
        """Whether a failed read is tried again: Redis away, full or refusing for now (BUSY, MASTERDOWN),
        or a blocked read it let go (UNBLOCKED: made a replica, a failover), which ended the follower and
        left its callers' streams open with nothing more for ever. Any other answer (a key not of ours:
        WRONGTYPE) ends them as a lost job's, never a silent hang."""
        if refuses_every_write(exc) or (isinstance(exc, ResponseError) and lost_groups(exc)):
            log.debug("following job %s: Redis unreachable or refusing for now (%s)", job.id, exc)
            return True
        log.warning("following job %s: Redis answered %s", job.id, exc)
        self._lost(job)
        return False

    def local_pcm(self, job_id: str, entry: PcmEntry) -> None:
        """A PCM entry this node's engine just made (on the loop, as it is queued for Redis): a job whose
        audio is followed here has it now rather than one Redis round trip and a read later. Only once
        the section's `synth` is published here (the order a local queue gives); else the stream's copy
        brings it as before. Nothing is skipped in Redis, so the guarantees are the stream's."""
        followed = self._audio.get(job_id)
        if followed is not None and followed[0].current_idx == entry.idx:
            job, pcm = followed
            self._publish_chunks(job, pcm.feed_local(entry))

    async def _read(
        self, job: Job, after: int, pcm: PcmFollow | None
    ) -> tuple[list[LogEntry], list[PcmEntry], bool]:
        if pcm is None:
            return await self.jobs.read_log(job.id, after, self.block_ms), [], False
        return await pcm_stream.read_log_and_pcm(self.jobs, job.id, after, pcm.cursor, self.block_ms)

    def _publish_chunks(self, job: Job, chunks: list[AudioChunk]) -> None:
        for chunk in chunks:
            if job.first_audio_at is None and chunk.samples.size and self.on_first_audio is not None:
                self.on_first_audio(job)
            job.publish_audio(chunk)

    @staticmethod
    def _release(job: Job, held: list[LogEntry], pcm: PcmFollow | None, more: bool) -> list[LogEntry]:
        """Publish held entries in log order while their audio is complete; the job's `done` (all its
        audio read) or lost audio releases the rest. Returns what still waits."""
        done = any(isinstance(e.event, Done) for e in held) and not more
        for pos, entry in enumerate(held):
            if pcm is not None and not (done or pcm.lost or pcm.ready(entry)):
                return held[pos:]
            apply_event(job, entry.event)
            job.next_seq = entry.seq + 1
            job.publish(entry)
        return []

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _trim(self, job_id: str, closed: str) -> None:
        """The PCM the listener has read, dropped (`outage.skippable`: the stream goes with the job)."""
        await skippable(
            lambda: pcm_stream.trim_read(self.jobs, job_id, closed), f"job {job_id}: its PCM's trim"
        )

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
