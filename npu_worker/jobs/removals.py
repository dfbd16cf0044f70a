"""Finished jobs the worker removed, and why: counted by reason (`/metrics`), and the latest ids kept so
that a lookup of one says why it is gone.

Why: a job removed to make room under `--jobs-max-bytes` answered only "no job X", like an id that never
was, so a caller that polled a little late could not tell a typo from work the worker deleted (nor what
to change: fetch sooner, give `output_path`, or ask for a larger bound).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

RETENTION, ROOM = "retention", "room"  # the reasons: --job-retention / --max-jobs-kept, --jobs-max-bytes
WHY = {
    RETENTION: "removed by retention (--job-retention, --max-jobs-kept)",
    ROOM: "removed to make room under --jobs-max-bytes (the oldest finished jobs go first)",
}
# Ids remembered: 1.6 MB at most (tracemalloc over 20 000 removals); an older one answers "no job X" alone.
KEEP_IDS = 10_000


class Removals:
    """Counts by reason since start-up, and the reason of the latest `keep` removals by job id."""

    def __init__(self, keep: int = KEEP_IDS) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, str] = OrderedDict()
        self.counts = {RETENTION: 0, ROOM: 0}

    def removed(self, job_ids: Iterable[str], reason: str) -> None:
        with self._lock:
            for job_id in job_ids:
                self.counts[reason] += 1
                self._recent[job_id] = reason
                self._recent.move_to_end(job_id)
            while len(self._recent) > self._keep:
                self._recent.popitem(last=False)

    def why(self, job_id: str) -> str | None:
        """Why the job was removed, if it was lately."""
        with self._lock:
            reason = self._recent.get(job_id)
        return WHY[reason] if reason is not None else None
