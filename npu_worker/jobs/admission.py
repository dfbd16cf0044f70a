"""Admission and queue policy: which jobs wait, in what order they are served, and what they may cost.

One lock guards everything here. Capacity is *reserved* under it (check and count in one step), so
concurrent submissions can never overshoot `max_queue` between a check and an append. The engine thread
and the preview lanes wait on two conditions of that lock, each woken only when it would find work.

Order of work: a job that has not produced audio yet goes first (previews start fast, and a new batch
gets its first section out early); otherwise jobs are served round-robin, one section at a time, so a
preview never waits for a 39-slide batch to finish. Where the engine can pause a section between its
steps (ZipVoice), a waiting preview does not even wait for the running batch section (nor for a
preview heard already, `lending.py`): the engine thread asks `preempting_section` at each step
boundary and runs the preview's section in between.
Where the engine can also stop a call in flight (`attach_interrupt`), a cancel of the running section
stops its call at once, and a preview that starts waiting stops the batch section's call if redoing it
is cheap; both are decided under the same lock that changes which job runs, so they never hit another job.
Where the engine has more instances (`--preview-lanes` 2 to 4, espeak), the other engine threads take
streaming previews (`next_preview`) whenever one waits, and other previews (`/synth`, a `/ws` request
with `audio: false`) while the first thread is busy;
a job's sections still run one at a time.

None of this may starve anyone: a job that has waited while `PASSED_OVER_LIMIT` sections went to
others goes next, whatever it is, and a batch section lends the engine to at most that many preview
sections (a steady `/synth` flood had kept a 39-section batch at 0 of 39).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable

from ..errors import SHUTTING_DOWN_REASON, counted
from ..protocol import QueueFull
from .lending import borrower, is_preview, lends
from .model import Job, Section

# Sections handed to other jobs while a job waits (or inside one batch section) before it goes first.
PASSED_OVER_LIMIT = 8


class Cancelled(enum.Enum):
    NOT_LIVE = "not live"  # finished, unknown, or never admitted: nothing to do
    RUNNING = "running"  # the engine thread stops it at its next chunk and ends it
    DEQUEUED = "dequeued"  # it was only waiting: the caller ends it now


class Admission:
    def __init__(self, max_queue: int) -> None:
        self.max_queue = max_queue
        # Taken as itself (`with self._lock`), not through a condition: `Condition.__enter__` and
        # `__exit__` are Python calls around the lock's own, two more each time a lane takes it
        # (benchmarks/SERVER_OVERHEAD.md, stop 55); the conditions are for waiting and waking.
        self._lock = lock = threading.RLock()
        self._cond = threading.Condition(lock)  # the engine thread's wait for work
        self._lanes_cond = threading.Condition(lock)  # the preview lanes' wait for a preview
        self._lanes_waiting = 0  # preview lanes waiting in `next_preview`
        self._active: list[Job] = []
        self._waiting = 0  # sections reserved and not yet finished, over all jobs
        self._reserved: dict[str, int] = {}
        self._running: list[Job] = []  # the engine thread's sections: a batch's, and a preview inside it
        self._open: dict[str, int] = {}  # sections handed to the engine thread and not yet ended, by job
        self._beside: list[Job] = []  # the preview lanes' sections (an engine with more instances)
        self._lane_interrupts: dict[str, Callable[[bool], object]] = {}  # their engines' `interrupt`
        self._engine_waiting = False  # the engine thread waits in `next_section` for work
        self._tick = 0  # sections handed out so far: `Job.last_served` is the tick of its latest
        self._stopping = False
        self._interrupt: Callable[[bool], object] | None = None
        self._preempts = False
        self.on_preview_queued: Callable[[], object] = lambda: None  # stops a section sent ahead (runner)

    def attach_interrupt(self, interrupt: Callable[[bool], object], preempts: bool) -> None:
        """The engine's `interrupt(restart)`: called for a cancel of the running section, and (when
        `preempts`: batch sections pause for previews) when a preview starts waiting behind one."""
        with self._lock:
            self._interrupt, self._preempts = interrupt, preempts

    # -- the views' side ------------------------------------------------------------------------

    def reserve(self, job: Job, sections: int) -> None:
        """Count `sections` against the bound, or raise QueueFull; `enqueue` or `release` must follow."""
        with self._lock:
            if self._stopping:
                raise QueueFull(SHUTTING_DOWN_REASON)
            if self._waiting + sections > self.max_queue:
                waiting = counted(self._waiting, "section is waiting", "sections are waiting")
                raise QueueFull(f"{waiting} (bound {self.max_queue})")
            self._waiting += sections
            self._reserved[job.id] = sections

    def release(self, job: Job) -> None:
        """Give back what `job` still holds (it could not be opened, or it ended)."""
        with self._lock:
            self._waiting -= self._reserved.pop(job.id, 0)

    def enqueue(self, job: Job, told_at_once: Callable[[Job], object] | None = None) -> None:
        """Make a reserved (or recovered) job runnable. `told_at_once(job)` runs when a thread waits for
        work and nothing else is live (`taken_at_once`), under the lock, `job` queued: no job queued
        meanwhile, from any thread, goes first, nor is it taken before the call has returned (a look,
        then the queueing, let a job queued between them take the engine the caller was told of)."""
        with self._lock:
            told = told_at_once if told_at_once is not None and self._takes_at_once() else None
            if job.id not in self._reserved:  # recovered at start-up: counted now, never refused
                pending = len(job.pending)
                self._waiting += pending
                self._reserved[job.id] = pending
            job.last_served = self._tick  # it waits from now on (a flood of later previews passes it by)
            self._active.append(job)
            if told is not None:
                try:
                    told(job)
                except BaseException:
                    self._dequeue(job)  # never queued: what it reserved is given back
                    raise
            self._wake_if_work(job)
            if job.preview and self._running and not self._lanes_waiting:  # (a waiting lane takes it)
                self.on_preview_queued()
            running = self._running[-1] if self._running else None
            if self._interrupt and self._preempts and running and self._lends(running, to=job):
                self._interrupt(True)

    def cancel(self, job_id: str) -> tuple[Cancelled, Job | None]:
        with self._lock:
            job = next((j for j in self._active if j.id == job_id), None)
            if job is None:
                return Cancelled.NOT_LIVE, None
            job.cancel_requested.set()
            if self._open.get(job.id):  # being made, or its end is still to be logged
                if self._interrupt and self._running[-1:] == [job]:
                    self._interrupt(False)
                elif (interrupt := self._lane_interrupts.get(job.id)) is not None:
                    interrupt(False)  # a preview lane's section
                return Cancelled.RUNNING, job
            self._dequeue(job)
            return Cancelled.DEQUEUED, job

    def interrupt_running(self) -> None:
        """Stop every engine call in flight, for a shutdown past its grace: the cancel flag alone is
        seen at the engine's next chunk, and a proxied call (sovits) has none until its upstream answers.
        The preview lanes' too (their engines' own `interrupt`): only the engine thread's was stopped,
        and a lane whose espeak child had stopped answering held the exit for the join's 30 s."""
        with self._lock:
            if self._interrupt and self._running:
                self._interrupt(False)
            for job in self._beside:
                if (interrupt := self._lane_interrupts.get(job.id)) is not None:
                    interrupt(False)

    def live_job(self, job_id: str) -> Job | None:
        with self._lock:
            return next((j for j in self._active if j.id == job_id), None)

    def live_jobs(self) -> list[Job]:
        """Every queued or running job, previews included (a snapshot)."""
        with self._lock:
            return list(self._active)

    def queue_size(self) -> int:
        with self._lock:
            return self._waiting

    def jobs_running(self) -> int:
        with self._lock:
            return len(self._active)

    @property
    def stopping(self) -> bool:
        with self._lock:
            return self._stopping

    def running_jobs(self) -> list[Job]:
        with self._lock:
            return self._running + self._beside

    def running_job(self) -> Job | None:
        """The job whose section the engine computes now (a preview in a paused batch section, else a lane's)."""
        with self._lock:
            return self._current()

    # -- the engine thread's side ---------------------------------------------------------------

    def next_section(self, before_waiting: Callable[[], object] | None = None) -> tuple[Job, Section] | None:
        """Block until there is work; None once stopping. `before_waiting` runs outside the lock before
        the first wait (what the engine thread held for the finisher, `Finisher.release`)."""
        with self._lock:
            picked = self._pick()
            while picked is None and not self._stopping:
                if before_waiting is not None:  # (the finisher's work takes this lock: not under it)
                    self._lock.release()
                    try:
                        before_waiting()
                    finally:
                        self._lock.acquire()
                    before_waiting, picked = None, self._pick()
                    continue
                self._engine_waiting = True
                try:
                    self._cond.wait()
                finally:
                    self._engine_waiting = False
                picked = self._pick()
            if self._stopping or picked is None:
                return None
            taken = self._take(*picked)
            if self._lanes_waiting and self._lane_work() is not None:
                self._lanes_cond.notify()  # a `/synth` waiting behind this section may go to a lane
            return taken

    def preempting_section(self, running: Job) -> tuple[Job, Section] | None:
        """A waiting preview's next section, to run now while `running`'s section is paused (`lending.py`:
        a batch's for any preview; a preview's, heard already, for one whose first audio is still to come)."""
        with self._lock:
            if self._stopping or self._running[-1:] != [running] or not self._lends(running):
                return None
            picked = self._waiting_preview(borrower(running))
            return None if picked is None else self._take(*picked)

    def next_preview(self, interrupt: Callable[[bool], object] | None = None) -> tuple[Job, Section] | None:
        """The preview lane's work (`_lane_work`): block until there is some; None once stopping.
        A preview's sections still run one at a time, whichever lane takes each. `interrupt`: the
        lane's engine's, called for a cancel of the section taken, as `attach_interrupt`'s is."""
        with self._lock:
            picked = self._lane_work()
            while picked is None and not self._stopping:
                self._lanes_waiting += 1
                try:
                    self._lanes_cond.wait()
                finally:
                    self._lanes_waiting -= 1
                picked = self._lane_work()
            if self._stopping or picked is None:
                return None
            if interrupt is not None:
                self._lane_interrupts[picked[0].id] = interrupt
            taken = self._take(*picked, beside=True)
            if self._lanes_waiting and self._lane_work() is not None:
                self._lanes_cond.notify()  # another preview waits: the next lane (one wake a preview)
            return taken

    def _lane_work(self) -> tuple[Job, Section] | None:
        """A streaming preview someone listens to, first, unless the engine thread is waiting for work
        (it takes it then: previews one after another stay on one thread and its espeak child, warm,
        where they took turns on both, each cold, ≈ 0.6–1 ms more CPU a preview;
        benchmarks/SERVER_OVERHEAD.md, 2026-12-06); else another preview (`/synth`, a `/ws` request
        with `audio: false`), but only while the engine thread is busy, so it does not wait for that
        section (the `/synth` p95 at 20 req/s fell by a quarter, benchmarks/SERVER_OVERHEAD.md).
        Batches stay on the engine thread."""
        picked = None if self._engine_waiting else self._waiting_preview(_streams)
        if picked is None and self._running:
            picked = self._waiting_preview(is_preview)
        return picked

    def taken_at_once(self) -> bool:
        """Whether a job queued now is taken at once: an engine thread waits for work and no other job
        is live (none it would take first). A streaming preview's first `synth` is then told at admission
        with its `start`, not by the lane a wake-up of the loop later (benchmarks/SERVER_OVERHEAD.md, stop 59):
        `enqueue`'s `told_at_once`, which looks in the same step as it queues."""
        with self._lock:
            return self._takes_at_once()

    def _takes_at_once(self) -> bool:
        """`taken_at_once`, under the lock."""
        return (self._engine_waiting or self._lanes_waiting > 0) and not self._active and not self._stopping

    def has_work(self) -> bool:
        """A section is waiting for the engine thread now."""
        with self._lock:
            return self._pick() is not None

    def section_made(self, job: Job) -> None:
        """The engine thread has left a section of `job` (made, failed or cancelled): a cancel no
        longer stops a call of it; its end (`section_done`) may follow later, on the finisher thread."""
        with self._lock:
            self._leave(job)

    def section_done(self, job: Job) -> bool:
        """A section of `job` has ended (its `ok` or error is logged, or it was cancelled); True if the
        job has ended (cancelled or nothing left, and no other section of it still open), and then it
        is no longer active. The engine thread left the section already (`section_made`), and may
        run the job's next one now: leaving again took that one off `_running`, and a batch section
        whose previous one ended on the finisher thread let no preview in (seconds of waiting)."""
        with self._lock:
            if job.id in self._reserved:
                self._reserved[job.id] -= 1
                self._waiting -= 1
            left = self._open.pop(job.id, 1) - 1
            if left:
                self._open[job.id] = left
            finished = (job.cancel_requested.requested or job.all_ended) and not left
            if finished and job in self._active:
                self._dequeue(job)
            self._wake_if_work(job)  # the job's next section may go to either lane now
            return finished

    def stop(self) -> Job | None:
        """Refuse new work and wake the engine thread; returns the running job (to cancel it)."""
        with self._lock:
            self._stopping = True
            self._cond.notify_all()
            self._lanes_cond.notify_all()
            return self._current()

    def take_waiting_previews(self) -> list[Job]:
        """The previews of which no section is being made, out of the queue (for a shutdown to end:
        none of their sections will run, and previews are not kept for the next start)."""
        with self._lock:
            taken = [job for job in self._active if job.preview and not self._open.get(job.id)]
            for job in taken:
                self._dequeue(job)
            return taken

    def _wake_if_work(self, job: Job) -> None:
        """Wake the engine thread when it waits and would find work now, and one preview lane when one
        waits and `job` (just queued, or a section of it just ended) is a preview it would take; under
        the lock. A woken thread takes the GIL to look and waits again if it finds nothing: every
        arrival and section's end of a batch woke the idle lanes, which never take a batch's sections,
        and a lone `/synth` woke them twice more (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 50).
        Only `job` changed, so only `job` is looked at for the lanes (a preview of another job a lane
        could take woke one when it became one: `next_section` and `next_preview` wake one for those
        their take leaves); the engine thread's first job with a section to take decides, not a
        ranking (`_pick`) of them all at each arrival and section's end (0.4 ms with 1 000 queued)."""
        if self._engine_waiting and self._any_takeable():
            self._cond.notify()
        if self._lanes_waiting and self._lane_takes(job):
            self._lanes_cond.notify()

    def _lane_takes(self, job: Job) -> bool:
        """A waiting lane would take a section of `job` now (`_lane_work`'s rules for one job)."""
        wanted = job.preview and ((job.stream_audio and not self._engine_waiting) or bool(self._running))
        free = not job.cancel_requested.requested and not self._open.get(job.id)
        return wanted and free and job.next_untaken() is not None

    def _any_takeable(self) -> bool:
        for job in self._active:  # (a loop, not `any` of a generator: a call a job less; the lanes' hot path)
            if self._takeable(job):
                return True
        return False

    def _takeable(self, job: Job) -> bool:
        """`job` has a section a waiting thread could take now (`_pick` passes over the others)."""
        free = not job.cancel_requested.requested and not _among(job, self._beside)
        return free and job.next_untaken() is not None

    def _lends(self, running: Job, to: Job | None = None) -> bool:
        """`running`'s section may still pause for a preview (for `to`, where given: `lending.py`): it
        has lent the engine to fewer than PASSED_OVER_LIMIT preview sections so far; under the lock."""
        if to is not None and not borrower(running)(to):
            return False
        return self._tick - running.last_served < PASSED_OVER_LIMIT and lends(running, self._running[:-1])

    def _current(self) -> Job | None:
        """The engine thread's innermost section's job, else a preview lane's; under the lock."""
        return self._running[-1] if self._running else next(iter(self._beside), None)

    def _pick(self) -> tuple[Job, Section] | None:
        best: Job | None = None
        best_key: tuple[bool, bool, bool, int] | None = None
        picked: Section | None = None
        for job in self._active:
            if job.cancel_requested.requested or _among(job, self._beside):
                continue
            if self._tick - job.last_served >= PASSED_OVER_LIMIT:  # waited long enough: oldest first
                key = (False, False, False, job.last_served)
            else:
                key = (True, _heard(job), not job.preview, job.last_served)
            if best_key is None or key < best_key:
                section = job.next_untaken()
                if section is not None:
                    best, best_key, picked = job, key, section
        if best is None or picked is None:
            return None
        return best, picked

    def _waiting_preview(self, wanted: Callable[[Job], bool]) -> tuple[Job, Section] | None:
        """The first-served waiting preview that `wanted` accepts and no lane is running a section of."""
        best: tuple[Job, Section] | None = None
        for job in self._active:
            if not wanted(job) or job.cancel_requested.requested or self._open.get(job.id):
                continue
            section = job.next_untaken()
            if section is not None and (best is None or _served_key(job) < _served_key(best[0])):
                best = job, section
        return best

    def _dequeue(self, job: Job) -> None:
        """`job` is no longer active, and what it still holds of the bound is given back; under the lock."""
        self._active.remove(job)
        self._waiting -= self._reserved.pop(job.id, 0)

    def _leave(self, job: Job) -> None:
        """A lane is no longer running a section of `job`."""
        if _among(job, self._beside):
            self._beside = [other for other in self._beside if other is not job]
            self._lane_interrupts.pop(job.id, None)
        elif job in self._running:
            self._running.remove(job)

    def _take(self, job: Job, section: Section, beside: bool = False) -> tuple[Job, Section]:
        """`section` goes to the engine thread now, or to a preview lane (`beside`); under the lock."""
        section.taken = True
        if beside:
            self._beside.append(job)
        else:
            self._running.append(job)
        self._open[job.id] = self._open.get(job.id, 0) + 1
        self._tick += 1
        job.last_served = self._tick
        return job, section


def _served_key(job: Job) -> tuple[bool, int]:
    """Previews without audio yet first, then the least recently served."""
    return _heard(job), job.last_served


def _heard(job: Job) -> bool:
    """Its caller hears audio already: its own, or its utterance's (`Job.continues`)."""
    return job.first_audio_at is not None or job.continues


def _among(job: Job, jobs: list[Job]) -> bool:
    """By identity (a Job compares equal field by field); a loop, as `Job.next_untaken`."""
    for other in jobs:
        if other is job:
            return True
    return False


def _streams(job: Job) -> bool:
    """The preview lane's work: a preview someone listens to live."""
    return job.preview and job.stream_audio
