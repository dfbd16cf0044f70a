"""How long finished jobs stay, and clean-up of what a crash left behind.

A finished job (its request, its log and its default outputs inside the state directory) is removed
`keep_seconds` after it ended, and the oldest finished ones go first once more than `max_jobs` are
kept. A caller's own `output_path` is never deleted: the journal removes only files it owns. Unfinished
jobs are never removed. `0` turns a bound off. A third bound, in bytes, is `--jobs-max-bytes`
(`job_bytes.py`): when a job's record or a default output would pass it, `make_room` removes the oldest
finished jobs that hold bytes, as many as it takes, and none when that would not be enough.

Ages run on the monotonic clock: a job that ends in this process is as old as the monotonic time since
its end, and one read back at start-up as old as the wall clock then said, plus the monotonic time since.
A step of the wall clock (NTP setting a board's clock at boot, weeks forward) had every finished job
look weeks old at the next job's end: their logs and default outputs went seconds after they ended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

from ..leftovers import remove_all_parts, remove_stale_parts_of
from .job_bytes import JobBytes
from .journal import LocalJournal
from .model import Job, KeptJob
from .registry import JobRegistry
from .removals import RETENTION, ROOM, Removals

log = logging.getLogger(__name__)


class Retention:
    def __init__(
        self,
        registry: JobRegistry,
        journal: LocalJournal,
        *,
        keep_seconds: float,
        max_jobs: int,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        job_bytes: JobBytes | None = None,
        removals: Removals | None = None,
    ) -> None:
        self.registry = registry
        self.removals = removals if removals is not None else Removals()  # counted by reason, for /metrics
        self.job_bytes = job_bytes
        if job_bytes is not None:
            job_bytes.make_room = self.make_room
        self.journal = journal
        self.keep_seconds = keep_seconds
        self.max_jobs = max_jobs
        self.clock = clock  # the wall clock: only to age the jobs found at the first sweep
        self.monotonic = monotonic
        self._lock = threading.Lock()
        # Finished jobs with their end on the monotonic clock, the oldest end first: built from the
        # registry at the first sweep, then each job joins at its end. Each sweep only looks at the
        # front (it sorted every kept job at every end: 10 ms a job with 20 000 kept).
        self._finished: OrderedDict[str, tuple[Job | KeptJob, float]] | None = None

    def _index(self, now: float) -> OrderedDict[str, tuple[Job | KeptJob, float]]:
        """The finished jobs, oldest end first (built at the first call; hold `_lock`)."""
        if self._finished is None:
            ordered = sorted((j for j in self.registry.snapshot() if j.finished), key=_end_time)
            wall = self.clock()  # an end past it (the clock was set back since) is an end now
            self._finished = OrderedDict(
                (job.id, (job, now - max(0.0, wall - _end_time(job)))) for job in ordered
            )
        return self._finished

    def _expired(self, ended: Job | KeptJob | None) -> list[Job | KeptJob]:
        """The finished jobs past either bound, oldest finished first, taken out of the index."""
        with self._lock:
            now = self.monotonic()
            self._finished = self._index(now)
            if ended is not None and ended.finished:
                self._finished[ended.id] = (ended, now)
                self._finished.move_to_end(ended.id)
            gone: list[Job | KeptJob] = []
            while self._finished:
                _, ended_at = next(iter(self._finished.values()))
                too_old = self.keep_seconds > 0 and now - ended_at > self.keep_seconds
                too_many = 0 < self.max_jobs < len(self._finished)
                if not (too_old or too_many):
                    break
                gone.append(self._finished.popitem(last=False)[1][0])
            return gone

    def sweep(self, ended: Job | KeptJob | None = None) -> int:
        """Remove what is past its time or over the count, `ended` (a job that has just finished)
        counted (blocking I/O: run off the event loop)."""
        gone = self._expired(ended)
        self.removals.removed((job.id for job in gone), RETENTION)  # before: a 404 meanwhile says why
        self._remove(gone)
        if gone:
            log.info("retention removed %d finished job(s)", len(gone))
        return len(gone)

    def make_room(self, need: int) -> int:
        """Remove the oldest finished jobs holding bytes until they have freed `need` bytes of
        --jobs-max-bytes; none when all of them together hold less (blocking I/O). Returns how
        many were removed."""
        if self.job_bytes is None:
            return 0
        with self._lock:
            finished = self._finished = self._index(self.monotonic())
            chosen = self.job_bytes.oldest_freeing(finished, need)  # (oldest end first)
            if not chosen:
                return 0
            gone = [finished.pop(job_id)[0] for job_id in chosen]
        self.removals.removed((job.id for job in gone), ROOM)
        self._remove(gone)
        log.info(
            "removed %d finished job(s) to keep the jobs in the state dir under --jobs-max-bytes (%d bytes)",
            len(gone),
            self.job_bytes.max_bytes,
        )
        return len(gone)

    def _remove(self, gone: list[Job | KeptJob]) -> None:
        for job in gone:
            self.registry.remove(job.id)
            try:
                self.journal.remove(job)
            except OSError as exc:
                log.warning("could not remove job %s: %s", job.id, exc)
            if self.job_bytes is not None:
                self.job_bytes.recount_job(job.id)


def _end_time(job: Job | KeptJob) -> float:
    return job.finished_at or job.created_at


def remove_crash_leftovers(jobs: Iterable[Job | KeptJob], owned_dirs: Iterable[Path]) -> int:
    """Temp files a `kill -9` left mid-write: in the worker's own directories (cache, job dirs) and
    beside the outputs of jobs that were still running (a caller's directory: only those targets)."""
    removed = sum(remove_all_parts(directory) for directory in owned_dirs)
    unfinished = (job for job in jobs if isinstance(job, Job) and not job.finished)
    outputs = (s.output_path for job in unfinished for s in job.sections if s.output_path)
    removed += remove_stale_parts_of(outputs)
    if removed:
        log.info("removed %d temp file(s) left by an interrupted write", removed)
    return removed
