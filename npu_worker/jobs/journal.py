"""The journal: the one way a job changes. Appending an event persists it, folds it into the job, then
publishes it to the job's listeners on the event loop, in that order, so the log never lags what a
client saw and every listener sees the same sequence.

`Journal` is the interface the scheduler uses; `LocalJournal` keeps logs in the state directory. A
shared journal (several workers on several machines, e.g. on Redis Streams) is another implementation
of the same methods: create, append, recover, load, remove.
"""

from __future__ import annotations

import abc
import contextlib
import errno
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import IO

from ..protocol import Done, Event, Progress, Start, StateUnavailable, WriteFailed
from .job_bytes import JobBytes
from .loop_handoff import LoopHandoff
from .model import Job, KeptJob, LogEntry, apply_event
from .observer import SchedulerObserver
from .seq_jump import WholeLogsMark, jumped_next_seq
from .store import JobStore

log = logging.getLogger(__name__)


class Journal(abc.ABC):
    """Event log of every job: persist → fold → publish, one event at a time."""

    def __init__(self, handoff: LoopHandoff, observer: SchedulerObserver | None = None) -> None:
        self.handoff = handoff
        self.observer = observer if observer is not None else SchedulerObserver()
        self._lock = threading.Lock()

    def append(self, job: Job, event: Event) -> LogEntry:
        """Persist `event` (persisted jobs), fold it into `job`, then publish it on the loop.

        Persisting comes first: readers on the loop see the job's state change only once the log holds
        the event, so a status a client saw is never lost by a crash (a `done` job stays done).
        """
        with self._lock:
            entry = LogEntry(job.next_seq, event)
            if job.persisted:
                try:
                    self.persist(job, entry)
                except OSError as exc:
                    log.error("could not persist an event of job %s: %s", job.id, exc.strerror or exc)
            job.next_seq += 1
            apply_event(job, event)
            self.observer.event(job, event)
            if job.answers_at_done and not isinstance(event, Done):
                self.handoff.with_next(job.publish, entry)  # its `done` follows: one wake-up for all
            elif isinstance(event, Start):  # a job's first: no listener waits on it yet, none appends
                self.handoff.at_once(job.publish, entry)  # on the loop (admission), published now
            elif job.stream_audio and job.first_audio_at is not None:
                # with the audio's window, if one is due; a `done` opens none past it
                self.handoff.soon(job.publish, entry, last=isinstance(event, Done))
            elif job.synth_at_admission and isinstance(event, Progress):  # its first `synth`, at admission
                self.handoff.at_once(job.publish, entry)  # on the loop: with its `start` (elsewhere a call)
            else:
                self.handoff(job.publish, entry)
        return entry

    @abc.abstractmethod
    def create(self, job: Job) -> None:
        """Record a new persisted job (its request) before its first event."""

    @abc.abstractmethod
    def persist(self, job: Job, entry: LogEntry) -> None:
        """Store one entry durably enough that a crash right after loses nothing a client saw."""

    @abc.abstractmethod
    def recover(self) -> Sequence[Job | KeptJob]:
        """Every stored job, oldest created first; unfinished ones come back `interrupted`."""

    @abc.abstractmethod
    def begin_run(self, unfinished: Sequence[Job]) -> None:
        """At start-up, before any event of this run: jump the seqs of `unfinished` (resumed) jobs where
        the last run may have published events their logs lack (`seq_jump.py`)."""

    @abc.abstractmethod
    def load(self, job_id: str) -> Job | None:
        """One stored job, or None."""

    @abc.abstractmethod
    def remove(self, job: Job) -> None:
        """Forget a finished job: its log, its request and its default outputs (never a caller's file)."""

    def persisted_all(self, job: Job) -> bool:
        """Whether every event of `job` is stored (a full disk may still hold some back)."""
        return True

    @abc.abstractmethod
    def default_output(self, job_id: str, idx: int) -> str:
        """Where a section without `output_path` writes its wav."""


class LocalJournal(Journal):
    """Logs in `<state>/jobs/<id>/` (see `store.py`).

    A log file stays open from a job's first event to its `done` (no open/close per event), for at
    most `max_open` jobs at once: thousands of queued jobs never exhaust file descriptors.

    Lines a full disk refused are kept, in order, and written before the job's next line, at any
    other job's next event, or at `close`, once there is room: a live client saw them, and a log
    missing them would make a restart redo the job's sections under seq numbers already seen.
    """

    def __init__(
        self,
        store: JobStore,
        handoff: LoopHandoff,
        max_open: int = 32,
        observer: SchedulerObserver | None = None,
        job_bytes: JobBytes | None = None,
        make_room: Callable[[str], bool] | None = None,
    ) -> None:
        super().__init__(handoff, observer)
        self.store = store
        # the synthesis cache's `give_room`: a record a full disk refused gets one more try once it gave room
        self.make_room = make_room
        # --jobs-max-bytes: a record is counted (and room made) before it is written, a log at its `done`
        self.job_bytes = job_bytes
        self.max_open = max_open
        self._open: OrderedDict[str, IO[bytes]] = OrderedDict()
        self._unwritten: dict[str, list[LogEntry]] = {}  # by job: lines a full disk refused, in order
        self._torn: set[str] = set()  # jobs whose log may end in a line the full disk cut short
        self._mark = WholeLogsMark(store.root.parent)
        self._jumped: set[str] = set()  # resumed jobs whose seq jumped and whose log does not show it yet
        self._removing: set[str] = set()  # such jobs, or with lines held, whose files are not gone yet
        self._tracking = False  # the mark is this run's: from `begin_run` (the last run's read) to `close`
        self._last_run_whole: bool | None = None  # the last run's mark, once read (and removed)

    def create(self, job: Job) -> None:
        record = self.store.record(job)
        counted = (
            self.job_bytes.writing(job.id, self.store.record_path(job.id), len(record))
            if self.job_bytes is not None
            else contextlib.nullcontext()
        )
        try:
            with counted:
                self._write_record(job, record)
        except WriteFailed:  # running jobs fill --jobs-max-bytes: nothing was queued, nothing removed
            assert self.job_bytes is not None
            bound = f"--jobs-max-bytes ({self.job_bytes.max_bytes} bytes)"
            if len(record) > self.job_bytes.max_bytes:
                why = f"is larger than {bound}: send fewer or shorter sections per batch"
            else:
                why = f"would pass {bound}, held by running jobs and what retention cannot remove; retry once they end"
            raise StateUnavailable(
                f"the job's record ({len(record)} bytes) {why}; nothing was queued"
            ) from None
        except OSError as exc:  # the worker's disk, not the caller's mistake: a named 503, no traceback
            log.error("could not record job %s in the state directory: %s", job.id, exc)
            raise StateUnavailable(
                f"the job could not be recorded in the worker's state directory ({exc.strerror or exc}); "
                "nothing was queued, retry later"
            ) from None

    def _write_record(self, job: Job, record: bytes) -> None:
        """`job.json`; once more where its disk was full and the cache gave up its room there (a cache
        that filled the state disk made every batch a 503 `StateUnavailable`, contract62)."""
        try:
            self.store.create(job, record)
        except OSError as exc:
            full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
            if not full or self.make_room is None or not self.make_room(self.store.record_path(job.id)):
                raise
            self.store.create(job, record)

    def begin_run(self, unfinished: Sequence[Job]) -> None:
        with self._lock:
            if not self._last_run() and unfinished:
                for job in unfinished:
                    job.next_seq = jumped_next_seq(job.next_seq - 1)
                    self._jumped.add(job.id)
                log.warning(
                    "the last run may have sent events its job logs lack (a full disk, then a stop): "
                    "the seq of %d resumed job(s) jumps past them",
                    len(unfinished),
                )
            self._tracking = True
            self._mark_if_whole()

    def _last_run(self) -> bool:
        """Whether the last run left every event it sent in its logs (its mark, removed at this read)."""
        if self._last_run_whole is None:
            self._last_run_whole = self._mark.take()
        return self._last_run_whole

    def _mark_if_whole(self) -> None:
        if self._tracking:
            self._mark.set(not self._unwritten and not self._jumped and not self._removing)

    def persist(self, job: Job, entry: LogEntry) -> None:
        self._unwritten.setdefault(job.id, []).append(entry)
        try:
            self._write_unwritten(job.id)
            self._jumped.discard(job.id)  # its log holds a line past the jump
            for other in [key for key in self._unwritten if key != job.id]:
                with contextlib.suppress(OSError):  # there is room again: what other jobs' logs still miss
                    self._write_unwritten(other)
        except OSError:
            self._last_run()  # a line refused before `begin_run`: the last run's mark must go now
            self._mark.set(False)  # after `close` too (a section the stop did not wait out): it was sent
            raise
        finally:
            self._mark_if_whole()

    def _write_unwritten(self, job_id: str) -> None:
        """Write the job's waiting lines, oldest first; OSError (the disk is still full) keeps the rest."""
        waiting = self._unwritten[job_id]
        out = self._open.get(job_id)
        if out is None:
            if len(self._open) >= self.max_open:
                self._open.popitem(last=False)[1].close()
            if job_id in self._torn:  # a line the full disk cut short: the next starts on its own
                self.store.truncate_torn_tail(job_id)
                self._torn.discard(job_id)
            out = self._open[job_id] = self.store.open_log(job_id)
        else:
            self._open.move_to_end(job_id)
        try:
            while waiting:
                self.store.write_line(out, self.store.log_line(waiting[0]))
                if isinstance(waiting.pop(0).event, Done):
                    self._open.pop(job_id).close()
                    if self.job_bytes is not None:  # the log is whole: one stat, before it is published
                        self.job_bytes.count_file(job_id, self.store.log_path(job_id))
        except OSError:
            self._open.pop(job_id).close()  # reopened (its cut line dropped) when there is room
            self._torn.add(job_id)
            raise
        del self._unwritten[job_id]

    def persisted_all(self, job: Job) -> bool:
        with self._lock:
            return job.id not in self._unwritten

    def recover(self) -> list[Job | KeptJob]:
        return self.store.load_all()

    def load(self, job_id: str) -> Job | None:
        if not job_id.isalnum():
            return None
        try:
            return self.store.load(job_id)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def remove(self, job: Job | KeptJob) -> None:
        with self._lock:
            handle = self._open.pop(job.id, None)
            if self._unwritten.pop(job.id, None) is not None or job.id in self._jumped:
                self._removing.add(job.id)  # its log misses seqs sent until its files are gone
            self._torn.discard(job.id)
            self._jumped.discard(job.id)
        if handle is not None:
            handle.close()
        if isinstance(job, KeptJob):  # its sections are on disk no more than its outputs are
            defaults = self.store.default_outputs_left(job.id)
        else:
            defaults = [
                s.output_path for s in job.sections if s.output_path == self.default_output(job.id, s.idx)
            ]
        self.store.remove(job.id, defaults)  # (an error: its files stay, so does the mark's absence)
        with self._lock:
            self._removing.discard(job.id)
            self._mark_if_whole()

    def default_output(self, job_id: str, idx: int) -> str:
        return self.store.default_output(job_id, idx)

    def close(self) -> None:
        with self._lock:
            lost = 0
            for job_id in list(self._unwritten):
                try:
                    self._write_unwritten(job_id)
                except OSError as exc:
                    lost = len(self._unwritten.pop(job_id))
                    log.error("%d event(s) of job %s were never persisted: %s", lost, job_id, exc.strerror)
            if not lost:  # every held line written now: the next start need not jump
                self._mark_if_whole()
            self._tracking = False  # lines lost (the mark stays away) or refused from now on (`persist`)
            handles, self._open = list(self._open.values()), OrderedDict()
        for handle in handles:
            handle.close()
