"""How long finished jobs stay, and clean-up of what a crash left behind.

A finished job (its request, its log and its default outputs inside the state directory) is removed
`keep_seconds` after it ended, and the oldest finished ones go first once more than `max_jobs` are
kept. A caller's own `output_path` is never deleted: the journal removes only files it owns. Unfinished
jobs are never removed. `0` turns a bound off.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..files import remove_all_parts, remove_stale_parts
from .journal import Journal
from .model import Job
from .registry import JobRegistry

log = logging.getLogger(__name__)


class Retention:
    def __init__(
        self,
        registry: JobRegistry,
        journal: Journal,
        *,
        keep_seconds: float,
        max_jobs: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.registry = registry
        self.journal = journal
        self.keep_seconds = keep_seconds
        self.max_jobs = max_jobs
        self.clock = clock

    def expired(self, jobs: Iterable[Job], now: float) -> list[Job]:
        """The finished jobs past either bound, oldest finished first (pure policy)."""
        finished = sorted((j for j in jobs if j.finished), key=lambda j: j.finished_at or j.created_at)
        over_count = max(0, len(finished) - self.max_jobs) if self.max_jobs > 0 else 0
        gone = []
        for position, job in enumerate(finished):
            ended = job.finished_at or job.created_at
            too_old = self.keep_seconds > 0 and now - ended > self.keep_seconds
            if too_old or position < over_count:
                gone.append(job)
        return gone

    def sweep(self) -> int:
        """Remove what is past its time or over the count (blocking I/O: run off the event loop)."""
        gone = self.expired(self.registry.snapshot(), self.clock())
        for job in gone:
            self.registry.remove(job.id)
            try:
                self.journal.remove(job)
            except OSError as exc:
                log.warning("could not remove job %s: %s", job.id, exc)
        if gone:
            log.info("retention removed %d finished job(s)", len(gone))
        return len(gone)


def remove_crash_leftovers(jobs: Iterable[Job], owned_dirs: Iterable[Path]) -> int:
    """Temp files a `kill -9` left mid-write: in the worker's own directories (cache, job dirs) and
    beside the outputs of jobs that were still running (a caller's directory: only those targets)."""
    removed = sum(remove_all_parts(directory) for directory in owned_dirs)
    for job in jobs:
        if job.finished:
            continue
        for section in job.sections:
            if section.output_path is not None:
                removed += remove_stale_parts(section.output_path)
    if removed:
        log.info("removed %d temp file(s) left by an interrupted write", removed)
    return removed
