"""The jobs that can be looked up by id (persisted ones), behind one lock.

Executor threads add and remove jobs while views on the loop list them: every method takes the lock,
and listings are snapshots, so no caller ever iterates the live dict.
"""

from __future__ import annotations

import threading

from .model import Job


class JobRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}

    def add(self, job: Job) -> None:
        with self._lock:
            self._jobs[job.id] = job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def remove(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.pop(job_id, None)

    def snapshot(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def recent(self, limit: int) -> list[Job]:
        """Newest first."""
        return sorted(self.snapshot(), key=lambda job: job.created_at, reverse=True)[:limit]

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)
