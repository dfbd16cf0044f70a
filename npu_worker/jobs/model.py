"""Jobs and sections: a request is a job of sections whose history is an append-only event log.

State is folded from events (`apply_event`) by the journal, the one writer; the log that subscribers
read is appended on the event loop (`publish`), so readers there never need a lock. No HTTP bodies
here: the views render jobs in their own shapes. No numpy either: audio is opaque to the model.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from .. import wire
from ..protocol import Done, Event, Progress, SectionError, SynthParams

QUEUED, RUNNING, DONE, CANCELLED, INTERRUPTED = "queued", "running", "done", "cancelled", "interrupted"


class LogEntry(msgspec.Struct, frozen=True, dict=True):
    """One event of a job's log; `seq` counts from 1 in log order (re-attach with `after=seq`).

    A msgspec `Struct`, made in C (`dict=True` keeps `line` once encoded): a frozen dataclass's `__init__`
    was a Python call and two `object.__setattr__` an entry, three a preview on the engine lane
    (benchmarks/SERVER_OVERHEAD.md, stop 59)."""

    seq: int
    event: Event

    def to_dict(self) -> dict[str, Any]:
        return {**self.event.to_dict(), "seq": self.seq}

    if TYPE_CHECKING:  # (for the type checker: at run time `__getattr__` makes it)

        @property
        def line(self) -> bytes:
            """The entry as one JSON object (`seq` last), encoded at its first read."""

    def __getattr__(self, name: str) -> bytes:
        """`line`, encoded once at its first read and kept in the entry's `__dict__`, where every read
        after finds it: the log file, every NDJSON listener and every WebSocket listener send these
        bytes. Not a `functools.cached_property`, whose `__get__` was a Python call and an `RLock`
        taken an entry (four a `/ws` preview on the loop; benchmarks/SERVER_OVERHEAD.md, stop 60);
        an entry nobody reads (a `/synth`'s) is never encoded."""
        if name != "line":
            raise AttributeError(f"'LogEntry' object has no attribute {name!r}")
        line = self.__dict__["line"] = wire.encode_entry(self.event, self.seq)
        return line


class AudioChunk(msgspec.Struct, frozen=True):
    """PCM (float32 samples) for live listeners; never persisted.

    `onset`, on the one chunk that reveals it, is where the request's audible onset lies, counted in
    samples from this chunk's first sample (negative when it lay in an earlier chunk: the rule needs a
    little audio after the onset before it can tell). The engine thread finds it once; views reuse it.
    A msgspec `Struct`, made in C: a frozen dataclass's `__init__` was a Python call (and four
    `object.__setattr__`) each chunk on the engine lane (benchmarks/SERVER_OVERHEAD.md, stop 56).
    """

    idx: int
    samples: Any
    onset: int | None = None
    pcm16: Any = None  # the samples as int16, made on the engine thread for a job with `pcm16_listener`


class CancelFlag:
    """A job's cancel: `requested`, a plain attribute the engine lane asks at every chunk without a call
    (`is_set` was ≈ 16 Python calls a `/ws` preview; benchmarks/SERVER_OVERHEAD.md, stop 54), and
    `wait` for a thread that waits for it (only tests do). Not a `threading.Event`: each job made one
    on the loop at its admission, a `Condition` and a lock with two Python `__init__`s, for a wait that
    never comes; the Event is made by the first `wait` (benchmarks/SERVER_OVERHEAD.md, stop 60).
    `set` marks `requested` before it looks for a waiter's Event, and `wait` makes its Event before it
    looks at `requested`: a cancel is never missed by a wait that began as it came."""

    # Class attributes, no `__init__`: a flag is made in C (the job's `default_factory`), no Python call.
    requested = False
    _event: threading.Event | None = None  # the first `wait`'s
    _making = threading.Lock()  # one Event a flag, however many threads wait at once

    def set(self) -> None:
        self.requested = True
        event = self._event
        if event is not None:
            event.set()

    def is_set(self) -> bool:
        return self.requested

    def clear(self) -> None:
        event = self._event
        if event is not None:
            event.clear()
        self.requested = False

    def wait(self, timeout: float | None = None) -> bool:
        """As `threading.Event.wait`: True once set (at once if it is), False after `timeout`."""
        event = self._event
        if event is None:
            with CancelFlag._making:
                event = self._event = self._event or threading.Event()
        if self.requested:
            event.set()
        return event.wait(timeout)


@dataclass
class Section:
    idx: int
    text: str
    output_path: str | None
    final: Progress | SectionError | None = None
    taken: bool = False  # handed to the engine thread (its end may still be on its way)

    @property
    def finished(self) -> bool:
        return self.final is not None


def new_job_id() -> str:
    """16 random hex digits, as `uuid4().hex[:16]` gave (its version digit, always 4, now random too):
    `uuid4`'s three Python calls came with every job the loop admits (benchmarks/SERVER_OVERHEAD.md,
    stop 60)."""
    return os.urandom(8).hex()


@dataclass
class Job:
    id: str
    params: SynthParams
    sections: list[Section]
    preview: bool = False
    persisted: bool = True
    stream_audio: bool = False
    # A listener sends its audio as int16 PCM (a `/ws` socket): the engine thread converts each chunk
    # before the hand-off, so the event loop, which serves every socket, does not.
    pcm16_listener: bool = False
    # Its first section's `synth` was appended at admission, on the loop, with its `start`: an idle engine
    # thread takes it at once (`Admission.taken_at_once`); the runner appends no other for that section.
    synth_at_admission: bool = False
    trim_leading_silence: bool = False
    cache_write: bool = True
    created_at: float = field(default_factory=time.time)
    status: str = QUEUED
    finished_at: float | None = None  # wall-clock end, folded from `done`
    current_idx: int | None = None
    first_audio_at: float | None = None
    handed_over_samples: int = 0  # a streaming job's audio handed to its listeners so far (runner.py)
    # A later sentence of a stream socket's utterance: its caller already hears that utterance, so it
    # is ordered as a job with audio (a new preview goes first), not as a preview waiting for its first.
    continues: bool = False
    # Its caller reads only its `done` (a `/synth`, which answers then; an OpenAI speech answer, which
    # reads its audio and the `done`): its other events reach the loop with the next audio chunk or the
    # `done`, not on a wake-up each (journal.py).
    answers_at_done: bool = False
    # Why its admission off the loop refused it, for a job admitted without a wake-up of the loop unless
    # refused (`Scheduler.submit`'s `quiet_admission`): its listeners are ended, and its caller raises this.
    refusal: BaseException | None = None
    submitted_at: float = field(default_factory=time.monotonic)
    # The monotonic clock at its creation, for a job this process created (`Scheduler.submit`); None for
    # one read back from its folder or a shared queue, whose time can only come from the wall clock.
    created_mono: float | None = None
    last_served: int = 0
    cancel_requested: CancelFlag = field(default_factory=CancelFlag)
    stopped_by_shutdown: bool = False  # its section was cut by the drain, not by a caller: it resumes
    # Its listener was dropped (`SlowConsumer`, logged as its section's error before the cancel): it ends
    # cancelled even when every section has an end, that error being one the cancel's reason wrote.
    listener_dropped: bool = False
    # A section's call failed after the cancel was asked (espeak's child killed for leaving its `STOP`
    # unanswered): the cancel cut that section, so the job ends cancelled though it has an end.
    failed_after_cancel: bool = False
    log: list[LogEntry] = field(default_factory=list)
    next_seq: int = 1
    subscribers: list[Any] = field(default_factory=list)
    # A preview's one listener's `push_audio`, set on the loop before the job can run (`Scheduler.submit`):
    # nobody else can listen to a preview, so its audio is handed straight there, not through
    # `publish_audio`'s Python call and copy of `subscribers` a chunk on the loop (stop 60). None: that call.
    audio_to: Any = None
    onset_watch: Any = None  # the engine thread's onset detector of a streaming job (runner.py)
    # Sections by idx, and the finals counted, kept for `sections` as it is (a new list: built again):
    # folding each event looked its section up in the list and every status counted them all, so a
    # thousand-section job cost a million steps to replay at start, and `GET /jobs` tens of ms.
    _index: tuple[list[Section], dict[int, Section], dict[type, int]] | None = field(
        default=None, repr=False, compare=False
    )
    # Where `next_untaken` looks first: sections before it are taken or ended, for good.
    untaken_from: int = field(default=0, repr=False, compare=False)

    @property
    def total(self) -> int:
        return len(self.sections)

    def _indexed(self) -> tuple[dict[int, Section], dict[type, int]]:
        if self._index is None or self._index[0] is not self.sections:
            counts: dict[type, int] = {Progress: 0, SectionError: 0}
            for section in self.sections:
                if section.final is not None:
                    counts[type(section.final)] += 1
            self._index = (self.sections, {s.idx: s for s in self.sections}, counts)
        return self._index[1], self._index[2]

    # The index read inline where it is current (a call of `_indexed` less each: every event an engine
    # lane logs looks its section up, and a job's end counts its finals; benchmarks/SERVER_OVERHEAD.md, stop 55).

    def section(self, idx: int) -> Section | None:
        index = self._index
        if index is None or index[0] is not self.sections:
            return self._indexed()[0].get(idx)
        return index[1].get(idx)

    def settle(self, section: Section, final: Progress | SectionError) -> None:
        """Set a section's final event (the one place it changes, so the counts stay true)."""
        index = self._index
        counts = self._indexed()[1] if index is None or index[0] is not self.sections else index[2]
        if section.final is not None:
            counts[type(section.final)] -= 1
        section.final = final
        counts[type(final)] += 1

    @property
    def ok_count(self) -> int:
        index = self._index
        return (self._indexed()[1] if index is None or index[0] is not self.sections else index[2])[Progress]

    @property
    def fail_count(self) -> int:
        index = self._index
        counts = self._indexed()[1] if index is None or index[0] is not self.sections else index[2]
        return counts[SectionError]

    @property
    def working_idx(self) -> int | None:
        """The section a status names as current: the last `synth` logged while that section is open,
        else the first section still to end. A file-only job's finisher logs the next `synth` after the
        section before's `ok` and cache write, while the engine already makes it: polled, 7 statuses in 10
        named a section already done (`done: 3, current_idx: 2`)."""
        if self.current_idx is None:
            return None
        section = self.section(self.current_idx)
        if section is None or not section.finished:
            return self.current_idx
        return next((s.idx for s in self.sections if not s.finished), None)

    @property
    def pending(self) -> list[Section]:
        return [s for s in self.sections if not s.finished]

    def next_untaken(self) -> Section | None:
        """The first section not yet handed to an engine thread nor ended (`Admission`'s pick). From a
        cursor: a section once taken or ended stays so, and each pick scanned a batch from its first
        section, quadratic in its sections under the admission lock (a 1 000-section batch: 500 500
        sections looked at, now 2 000; tests/test_admission_cursor.py). A loop over `final` itself:
        `next` of a generator asking `finished` cost three calls a section (stop 53)."""
        sections = self.sections
        at = self.untaken_from
        end = len(sections)
        while at < end:
            section = sections[at]
            if not section.taken and section.final is None:
                break
            at += 1
        self.untaken_from = at
        return sections[at] if at < end else None

    @property
    def all_ended(self) -> bool:
        """Every section has its final, looked for from the last, which a batch ends last: at each
        section's end `not pending` listed every section not ended, a scan of the whole batch each time
        (quadratic in its sections, under the admission lock; benchmarks/SERVER_OVERHEAD.md, stop 60)."""
        for section in reversed(self.sections):
            if section.final is None:
                return False
        return True

    @property
    def finished(self) -> bool:
        return self.status in (DONE, CANCELLED)

    @property
    def done_event(self) -> Done | None:
        for entry in reversed(self.log):
            if isinstance(entry.event, Done):
                return entry.event
        return None

    def elapsed(self) -> float:
        done = self.done_event
        if done is not None:
            return done.elapsed_total_sec
        return round(self.seconds_since_created(time.time()), 3)

    def seconds_since_created(self, wall_now: float) -> float:
        """On the monotonic clock for a job of this process: a step of the wall clock (NTP's at boot, or
        one set back) made its time months long or negative. Else by the wall clock, never below 0."""
        if self.created_mono is not None:
            return time.monotonic() - self.created_mono
        return max(0.0, wall_now - self.created_at)

    # -- event loop side -----------------------------------------------------------------------

    def publish(self, entry: LogEntry) -> None:
        """Append to the in-memory log and hand to subscribers (event loop thread only)."""
        self.log.append(entry)
        for subscriber in list(self.subscribers):
            subscriber.push(entry)

    def publish_audio(self, chunk: AudioChunk) -> None:
        """To every listener (event loop thread only); a preview's goes to `audio_to` instead."""
        for subscriber in list(self.subscribers):
            subscriber.push_audio(chunk)

    def entries_after(self, after: int) -> list[LogEntry]:
        return [e for e in self.log if e.seq > after]

    def log_only(self) -> Job:
        """This finished job as a replay of its events needs it: its log, not its sections (every text
        of a batch), which a caller reading a finished job's replay slowly kept, a copy per connection.
        Still finished (a Redis node's follower follows an unfinished copy, from its `next_seq`)."""
        return Job(
            id=self.id,
            params=self.params,
            sections=[],
            created_at=self.created_at,
            status=self.status,
            finished_at=self.finished_at,
            log=self.log,
            next_seq=self.next_seq,
        )


@dataclass(frozen=True, slots=True)
class KeptJob:
    """A finished job as the registry keeps it: what its status and the listing show. Its sections
    and log stay on disk, read again for the calls that need them (`Scheduler.stored_job`): kept
    whole, 20 000 finished 39-section jobs held about 1 GB."""

    id: str
    created_at: float
    finished_at: float | None
    status: str
    total: int
    ok_count: int
    fail_count: int
    elapsed_total_sec: float
    preview: ClassVar[bool] = False
    current_idx: ClassVar[None] = None
    working_idx: ClassVar[None] = None
    finished: ClassVar[bool] = True

    @classmethod
    def of(cls, job: Job, done: Done) -> KeptJob:
        """`job` once `done` (its last event) is folded: the loop may not have put it in `log` yet."""
        counts = (job.total, job.ok_count, job.fail_count)
        return cls(job.id, job.created_at, job.finished_at, job.status, *counts, done.elapsed_total_sec)

    def elapsed(self) -> float:
        return self.elapsed_total_sec


def apply_event(job: Job, event: Event) -> None:
    """Fold one event into the job's state (used live and when replaying a log after restart)."""
    if isinstance(event, Progress):
        section = job.section(event.idx)
        if event.status == "ok" and section is not None:
            job.settle(section, event)
        elif section is not None:
            job.current_idx = event.idx
            job.status = RUNNING
    elif isinstance(event, SectionError):
        section = job.section(event.idx) if event.idx is not None else None
        if section is not None:
            job.settle(section, event)
    elif isinstance(event, Done):
        job.status = CANCELLED if event.cancelled else DONE
        job.current_idx = None
        job.finished_at = job.created_at + event.elapsed_total_sec
