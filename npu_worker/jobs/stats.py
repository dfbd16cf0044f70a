"""Counters of the job core, for /health and metrics: updated from any thread, read as a snapshot."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Job
    from .observer import SchedulerObserver


class Stats:
    def __init__(self, ttfa_window: int = 200) -> None:
        self._lock = threading.Lock()
        self._ttfa_ms: deque[float] = deque(maxlen=ttfa_window)
        self._counts = {
            "jobs_submitted": 0,
            "jobs_refused": 0,
            "jobs_finished": 0,
            "jobs_cancelled": 0,
            "sections_ok": 0,
            "sections_failed": 0,
            "sections_cached": 0,
        }

    def count(self, name: str, by: int = 1) -> None:
        with self._lock:
            self._counts[name] += by

    def section_ok(self, cached: bool) -> None:
        with self._lock:
            self._counts["sections_ok"] += 1
            self._counts["sections_cached"] += int(cached)

    def section_failed(self) -> None:
        self.count("sections_failed")

    def first_audio(self, ttfa_ms: float) -> None:
        with self._lock:
            self._ttfa_ms.append(ttfa_ms)

    def ttfa_ms(self) -> list[float]:
        """Server-side time to first audio of recent requests (submit → first chunk out), oldest first."""
        with self._lock:
            return list(self._ttfa_ms)

    def snapshot(self) -> dict[str, Any]:
        """Totals since start-up (monotonic counters) plus the recent TTFA window."""
        with self._lock:
            return {**self._counts, "ttfa_ms_recent": list(self._ttfa_ms)}


def record_first_audio(job: Job, stats: Stats, observer: SchedulerObserver) -> None:
    """The job's first audio is out now: its time; the TTFA window and the metrics (local and Redis
    queues) only for a job a listener hears as it is made (`stream_audio`): a files-only job's engine
    makes its first audio unhurried (`early_audio` False), so its figure read later and meant another thing."""
    job.first_audio_at = time.monotonic()
    if job.stream_audio:
        stats.first_audio((job.first_audio_at - job.submitted_at) * 1000.0)
        observer.first_audio(job, job.first_audio_at - job.submitted_at)
