"""The jobs that can be looked up by id (persisted ones), behind one lock; a finished one as its status
only (`KeptJob`: its sections and log stay in its folder).

Executor threads add and remove jobs while views on the loop list them: every method takes the lock,
and listings are snapshots, so no caller ever iterates the live dict.
"""

from __future__ import annotations

import itertools
import threading

from .model import Job, KeptJob


class JobRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job | KeptJob] = {}

    def add(self, job: Job | KeptJob) -> None:
        with self._lock:
            self._jobs[job.id] = job

    def get(self, job_id: str) -> Job | KeptJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def remove(self, job_id: str) -> Job | KeptJob | None:
        with self._lock:
            return self._jobs.pop(job_id, None)

    def snapshot(self) -> list[Job | KeptJob]:
        with self._lock:
            return list(self._jobs.values())

    def recent(self, limit: int) -> list[Job | KeptJob]:
        """Newest first, in the order jobs were added (read back at start-up oldest created first, then
        each as it is admitted), not by `created_at`: a job admitted after the wall clock was set back
        was listed below every job before it, and past a hundred of them not at all."""
        with self._lock:
            return list(itertools.islice(reversed(self._jobs.values()), limit))

    def replace(self, job: Job, kept: KeptJob) -> None:
        """`kept` in place of `job`, if the registry still holds that job."""
        with self._lock:
            if self._jobs.get(job.id) is job:
                self._jobs[job.id] = kept

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)
