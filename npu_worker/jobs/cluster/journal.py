"""`RedisJournal`: the journal seam over Redis Streams, for threads (the engine thread, executors).

The local journal numbers events itself; here `seq` is assigned inside Redis (a job's events may come
from several nodes at once), so `append` runs the APPEND script and folds the event with the seq it
got. Each call hops onto the event loop, where the one redis.asyncio client lives.

Calls from the engine thread retry while Redis is unreachable or full, or refuses every write for now
(`outage.refuses_every_write`: the section's audio is kept and delivered once Redis is back); calls made
for a request fail fast with `QueueUnavailable`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from typing import Any, TypeVar

from redis.exceptions import ResponseError

from ...protocol import Done, Event, Progress, QueueUnavailable, SectionError
from ..journal import Journal
from ..loop_handoff import LoopHandoff
from ..model import Job, LogEntry, Section, apply_event
from ..observer import SchedulerObserver
from ..shared_copies import SharedCopies
from ..store import JobStore
from .outage import REDIS_WAIT, WriteRefusals, redis_unreachable, refuses_every_write
from .store import RedisJobs
from .wav_upload import StagedWav, StagedWavLost, new_upload, pieces, put_piece, staged_key

log = logging.getLogger(__name__)
T = TypeVar("T")
# Uploads of a section's wav whose staged copy went before it was moved in place, before its section fails.
UPLOAD_TRIES = 3
Before = Callable[[], Awaitable[object]] | None


class RedisJournal(Journal):
    def __init__(
        self,
        jobs: RedisJobs,
        store: JobStore,
        handoff: LoopHandoff,
        node: str,
        observer: SchedulerObserver | None = None,
    ) -> None:
        super().__init__(handoff, observer)
        self.jobs = jobs
        self.store = store  # only for the accepting node's default output paths
        self.node = node
        self.stopping = threading.Event()

    # -- the bridge ----------------------------------------------------------------------------------

    def call(self, make: Callable[[], Awaitable[T]], *, retry: bool = False) -> T:
        """Run `make()` on the loop and wait; with `retry`, keep trying while Redis is down or full."""
        if threading.get_ident() == self.handoff._loop_thread:
            raise RuntimeError("RedisJournal is for threads; on the loop use RedisJobs directly")
        delay = 0.05
        refusals: WriteRefusals | None = None  # Redis refusing writes: said as it starts and ends (it was
        # a WARNING a retry, every second while it lasted)
        while True:
            future = asyncio.run_coroutine_threadsafe(_awaited(make), self.handoff.loop)
            try:
                answer = future.result(timeout=30.0)
                if refusals is not None:
                    refusals.ended()
                return answer
            except (*REDIS_WAIT, FutureTimeout) as exc:
                future.cancel()
                if not retry or self.stopping.is_set():
                    raise redis_unreachable(exc) from exc
                log.warning(
                    "Redis unreachable or full (%s); retrying in %.1fs", exc or type(exc).__name__, delay
                )
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
            except ResponseError as exc:  # a value not of ours in a key (WRONGTYPE): a named 503, not a 500
                if retry and refuses_every_write(exc) and not self.stopping.is_set():
                    # Redis refusing every write for now (READONLY, MISCONF, BUSY): a wait like an outage,
                    # not the section's failure (it failed with `EngineError: ReadOnlyError: …`).
                    refusals = refusals or WriteRefusals(
                        f"node {self.node}, {threading.current_thread().name}"
                    )
                    refusals.refused(exc)
                    time.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                if retry:
                    raise
                log.error("Redis answered %s", exc)
                raise QueueUnavailable(
                    "the shared queue answered with an error (see the node's log)"
                ) from exc

    # -- the Journal seam ----------------------------------------------------------------------------

    def append(self, job: Job, event: Event) -> LogEntry:
        seq = self.call(lambda: self.jobs.append(job.id, event), retry=True)
        self.fold(job, event)
        return LogEntry(seq, event)

    def fold(self, job: Job, event: Event) -> None:
        """Fold an event appended elsewhere (the engine node appends `synth` on the loop) into `job`."""
        with self._lock:
            apply_event(job, event)
            self.observer.event(job, event)

    def create(self, job: Job) -> None:
        raise NotImplementedError("shared jobs are created on the loop: ClusterScheduler.submit")

    def persist(self, job: Job, entry: LogEntry) -> None:
        """Never called: `append` persists in Redis as it numbers the event."""

    def begin_run(self, unfinished: Sequence[Job]) -> None:
        """Nothing to jump here: Redis numbers every event and jumps after its own restart."""

    def recover(self) -> list[Job]:
        """Nothing to recover locally: unfinished shared work stays in Redis (pending entries)."""
        return []

    def load(self, job_id: str) -> Job | None:
        if not job_id.isalnum():
            return None
        return self.call(lambda: self.jobs.load(job_id))

    def load_shared(self, job_id: str, copies: SharedCopies) -> Job | None:
        """As `load`, one copy of a finished job for its readers meanwhile while its log is as it was
        read (a job still running is read for each caller: its log grows)."""
        if not job_id.isalnum():
            return None
        last = self.call(lambda: self.jobs.last_seq(job_id))
        if last is None:
            return None
        return copies.get(
            (job_id, last), lambda: self.load(job_id), lambda job: job.finished and job.next_seq - 1 == last
        )

    def remove(self, job: Job) -> None:
        self.call(lambda: self.jobs.remove(job, self.node))
        defaults = [
            s.output_path for s in job.sections if s.output_path == self.default_output(job.id, s.idx)
        ]
        self.store.remove(job.id, [p for p in defaults if p is not None])

    def default_output(self, job_id: str, idx: int) -> str:
        return self.store.default_output(job_id, idx)

    # -- the engine node's two ends of a section -----------------------------------------------------

    def section_made(
        self, job: Job, node: str, section: Section, wav: bytes, meta: dict[str, Any], *, first: Before = None
    ) -> bool:
        """Store the audio and hand the section to its accepting node (it writes the file, logs `ok`);
        `first()` runs on the loop before that (the end of the section's PCM stream)."""
        self._first(first)
        made = partial(self.jobs.made, job.id, node, section.idx)
        return self._handed_over(job.id, section.idx, wav, lambda up: made(up, meta))

    def settled(self, job: Job, section: Section) -> bool:
        """Whether the section needs nothing more (`RedisJobs.settled`): its file is not written again."""
        return self.call(lambda: self.jobs.settled(job.id, section.idx), retry=True)

    def section_ok(
        self, job: Job, node: str, section: Section, wav: bytes, event: Progress, *, first: Before = None
    ) -> bool:
        """A section with no file to write: store the audio and log `ok` here (no writer hop)."""
        self._first(first)
        made_ok = partial(self.jobs.made_ok_ending, job.id, node, section.idx)
        seq, done = self._handed_over(job.id, section.idx, wav, lambda up: made_ok(up, event))
        self.observed(job, event if seq else None, done)
        return seq > 0

    def _first(self, first: Before) -> None:
        if first is not None:
            self.call(first, retry=True)

    def _handed_over(
        self, job_id: str, idx: int, wav: bytes, script: Callable[[StagedWav], Awaitable[T]]
    ) -> T:
        """`script` (MADE, MADE_OK) once `wav` is uploaded; a staged copy that went (`StagedWavLost`)
        uploaded again, up to UPLOAD_TRIES uploads, then the section's `QueueUnavailable`: a Redis that
        evicted it at every try (short of memory, a volatile-* policy) held the engine thread for ever, its
        shutdown too."""
        tried = 0
        while True:
            tried += 1
            try:
                up = self._uploaded(job_id, idx, wav)
                return self.call(partial(script, up), retry=True)
            except StagedWavLost as exc:
                if tried >= UPLOAD_TRIES or self.stopping.is_set():
                    said = f"Redis lost the section's wav at each of {tried} uploads: {exc}"
                    raise QueueUnavailable(said) from exc
                log.warning("%s; uploading it again", exc)

    def _uploaded(self, job_id: str, idx: int, wav: bytes) -> StagedWav:
        """`wav` in Redis's staging key, a piece a call, each retried alone while Redis is away or slow
        (`wav_upload.py`): one call for the whole wav timed out at every try over a slow link."""
        up = new_upload(len(wav))
        key = staged_key(job_id, idx, up)
        for offset, piece in pieces(wav):
            self.call(partial(put_piece, self.jobs.redis, key, offset, piece), retry=True)
        return up

    def section_failed(self, job: Job, node: str, error: SectionError, *, first: Before = None) -> int:
        final = _after(
            first,
            lambda: self.jobs.final_ending(job.id, error.idx or 0, error, ok=False, node=node, advance=True),
        )
        seq, done = self.call(final, retry=True)
        self.observed(job, error if seq else None, done)
        return seq

    def observed(self, job: Job, final: Event | None, done: Done | None) -> None:
        """A section's end this node logged, and the `done` it ended its job with: for /metrics,
        counted once in the cluster, by the node that logged them (they reach the others' copies of
        the job through followers, which count nothing)."""
        for event in (final, done):
            if event is not None:
                self.observer.event(job, event)


def _after(first: Before, make: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
    """`make()` preceded, on the loop, by `first()` when there is one."""

    async def run() -> T:
        if first is not None:
            await first()
        return await make()

    return run


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    return await make()
