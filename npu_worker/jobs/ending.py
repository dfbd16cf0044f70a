"""A job's end: a caller's cancel (queued, running or finishing), and the last event of every job,
after which a finished persisted job is kept as its status only and subject to retention.

Apart from the scheduler's wiring because it decides what a cancel and an end leave on disk: a
`cancelled` marker for a running section, no `done` for a job only the shutdown cut (it resumes).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..protocol import Done
from .admission import Cancelled
from .journal import Journal
from .model import Job, KeptJob
from .readiness import Readiness
from .retention import Retention
from .store import JobStore

log = logging.getLogger(__name__)


class JobEnding(Readiness):
    clock: Callable[[], float]
    journal: Journal | None
    retention: Retention | None
    store: JobStore

    def cancel(self, job_id: str) -> bool:
        """Stop a job between engine chunks; True if it was still running or queued."""
        state, job = self.admission.cancel(job_id)
        if job is not None:
            job.stopped_by_shutdown = False  # the caller's cancel: the job ends cancelled
        if state is Cancelled.DEQUEUED and job is not None:
            self.end_job(job)
        elif state is Cancelled.RUNNING and job is not None and job.persisted:
            try:  # blocking, but only a DELETE gets here, and it calls from an executor thread
                self.store.mark_cancelled(job.id)
            except OSError as exc:  # the section still stops; only a crash before its end forgets
                log.warning("job %s: the cancel could not be recorded: %s", job.id, exc.strerror or exc)
        return state is not Cancelled.NOT_LIVE

    def end_job(self, job: Job) -> None:
        """The job's last event; finished persisted jobs are then subject to retention. A persisted
        job whose section only the shutdown cut gets none: its log leaves it to resume at the next start.
        A cancel that came as its last section ended, every section ended by its own end (a `/synth`
        caller's hang-up with its file written; a batch's DELETE after one section failed and the last
        was done), stopped nothing: the job ends done, as its caller's answer says (a section a cancel
        stops has no end of its own; a dropped listener's `SlowConsumer` is the cancel's own error, and
        so is a section that failed once the cancel had come: espeak's child killed at its `STOP`)."""
        if job.persisted and job.stopped_by_shutdown:
            log.info("shutdown: job %s left to resume at the next start", job.id)
            return
        cut = job.listener_dropped or job.failed_after_cancel
        ran_to_its_end = bool(job.sections) and job.all_ended and not cut
        cancelled = job.cancel_requested.requested and not ran_to_its_end
        if job.cancel_requested.requested and not cancelled:
            log.info("job %s: its cancel came as its last section ended; it ran to its end", job.id)
        elapsed = round(job.seconds_since_created(self.clock()), 3)
        assert self.journal is not None
        done = Done(job.total, job.ok_count, job.fail_count, elapsed, cancelled)
        self.journal.append(job, done)
        self.stats.count("jobs_cancelled" if cancelled else "jobs_finished")
        if job.persisted and self.retention is not None:
            kept: Job | KeptJob = job
            if self.journal.persisted_all(job):  # else its log on disk still lacks lines: kept whole
                kept = KeptJob.of(job, done)
                self.registry.replace(job, kept)
            self.retention.sweep(kept)
