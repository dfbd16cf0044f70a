"""One copy of a finished job, read whole, for every reader of it at once.

Each GET of a finished job that needs its sections or log (its result, a section's wav, its events)
read and parsed the job again: 5.6 MB and ≈ 30 ms for a 1 000-section batch, and every slow reader of
its events kept a copy of the log of its own (+125 MiB for 50 on a Redis node). A copy is known by what
it was read from (its `stamp`: the files' identities and sizes, or the Redis log's last seq), so a file
replaced or a log grown since is read again, never served as it was; only a finished job's copy is
shared (a running job's changes); a copy lives while a reader holds it (held weakly here) and for
`LINGER_SECONDS` after its last read (at most `KEEP` such), then is let go. A copy's log-only view
(`log_only`: what a replay of its events holds) is shared under the copy's key by the same rules: a
view of its own for each slow reader kept that reader's log alive once the copy was let go; a copy
and its view count as one job of the `KEEP`.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable

from ..deadline_thread import Armed, Watchdog
from .model import Job

KEEP = 2  # finished jobs kept for their next read though no reader holds them (a copy and its view: one)
LINGER_SECONDS = 5.0  # how long after its last read (a caller fetching a batch's wavs one by one)
_WATCHDOG = Watchdog("npu-worker-copies")  # its thread starts at the first linger


class _LogOnly(tuple[Hashable]):
    """The key of the log-only view of the copy under a key (`_job_of` counts the two as one job)."""

    __slots__ = ()


def _log_only(key: Hashable) -> Hashable:
    """The key of the log-only view of the copy under `key`."""
    return _LogOnly((key,))


def _job_of(key: Hashable) -> Hashable:
    """The copy's key for its view's: a reader of a job's events touched both, which counted as two of
    `keep`, so a batch whose wavs were fetched one by one lost its copy to one replay of another job."""
    return key[0] if isinstance(key, _LogOnly) else key


class _Reading:
    """A read under way for a key: the readers that come meanwhile wait for it, not read again."""

    __slots__ = ("done", "copy")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.copy: Job | None = None  # the copy, once read, if it may be shared


class SharedCopies:
    """Finished jobs by (id, stamp): the one copy every reader gets while it is held or lingers."""

    def __init__(self, *, keep: int = KEEP, linger: float = LINGER_SECONDS, watchdog: Watchdog = _WATCHDOG):
        self.keep = keep
        self.linger = linger
        self._watchdog = watchdog
        self._lock = threading.Lock()
        self._held: weakref.WeakValueDictionary[Hashable, Job] = weakref.WeakValueDictionary()
        self._reading: dict[Hashable, _Reading] = {}
        self._recent: OrderedDict[Hashable, tuple[Job, float]] = OrderedDict()  # and its last read
        self._armed: Armed | None = None

    def get(
        self, key: Hashable, read: Callable[[], Job | None], shareable: Callable[[Job], bool]
    ) -> Job | None:
        """The copy held under `key`, else `read()`'s (blocking: call from a thread), shared when
        `shareable` says so (finished, and still what `key` names). A read under way for `key` is
        waited for; its copy not shareable, or its read failed, each waiter reads for itself."""
        with self._lock:
            copy = self._held.get(key)
            if copy is not None:
                self._touch(key, copy)
                return copy
            reading = self._reading.get(key)
            if reading is None:
                reading = self._reading[key] = _Reading()
                mine = True
            else:
                mine = False
        if not mine:
            reading.done.wait()
            return reading.copy if reading.copy is not None else read()
        try:
            job = read()
            if job is not None and shareable(job):
                reading.copy = job
                with self._lock:
                    self._held[key] = job
                    self._touch(key, job)
            return job
        finally:
            with self._lock:
                del self._reading[key]
            reading.done.set()

    def log_only(self, copy: Job) -> Job:
        """`copy.log_only()`, one view for every reader of the shared `copy` (and of a copy read again
        under its key: the same files, the same log) while one holds it or it lingers; a copy not
        shared (a running job, one changed while it was read) gets a view of its own. Make it only of
        a copy its caller has checked: `held_log_only` hands it out unchecked."""
        with self._lock:
            key = next((key for key, held in self._held.items() if held is copy), None)
            if key is None:
                return copy.log_only()
            view = self._held.get(_log_only(key))
            if view is None:
                view = self._held[_log_only(key)] = copy.log_only()
            self._touch(_log_only(key), view)
            return view

    def held_log_only(self, key: Hashable) -> Job | None:
        """The log-only view of the copy read under `key`, if one is held (it lingers again); never reads."""
        with self._lock:
            view = self._held.get(_log_only(key))
            if view is not None:
                self._touch(_log_only(key), view)
            return view

    def __len__(self) -> int:
        """Copies and log-only views held now (by readers or lingering)."""
        return len(self._held)

    def _touch(self, key: Hashable, copy: Job) -> None:
        """(Under the lock.) `copy` read now: it lingers; the longest unread of more than `keep` goes."""
        self._recent[key] = (copy, time.monotonic())
        self._recent.move_to_end(key)
        while len({_job_of(held) for held in self._recent}) > self.keep:
            self._recent.popitem(last=False)
        if self._armed is None:
            self._armed = self._watchdog.arm(self.linger, self._let_go)

    def _let_go(self) -> None:
        """(The watchdog's thread.) Copies unread for `linger` are let go; a reader holding one keeps it."""
        with self._lock:
            self._armed = None
            now = time.monotonic()
            while self._recent:
                _, read_at = next(iter(self._recent.values()))
                if read_at + self.linger > now:
                    self._armed = self._watchdog.arm(read_at + self.linger - now, self._let_go)
                    break
                self._recent.popitem(last=False)
