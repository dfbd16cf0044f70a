"""The local scheduler's drain at shutdown: no new section, the running one let finish within the
grace (else stopped, its job left to resume), queued previews ended with the reason.

Apart from the scheduler because it runs once, at the end, and is the one place that decides what a
shutdown leaves to the next start (`docs/architecture.md`, "How a section flows", step 6).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from ..errors import SHUTTING_DOWN_REASON
from ..protocol import QueueFull, SectionError

if TYPE_CHECKING:
    from .model import Job, Section
    from .scheduler import Scheduler

log = logging.getLogger(__name__)


async def drain(scheduler: Scheduler, grace: float) -> None:
    """Start no new section; let the running one finish within `grace` seconds, else cancel it.

    Queued sections of batch jobs stay in their logs and resume after a restart. Logs what it did.
    """
    admission, runner = scheduler.admission, scheduler.runner
    if admission.stopping:
        return
    scheduler.recovery.stop.set()
    running = admission.stop()
    end_waiting_previews(scheduler)
    if runner is not None:
        runner.stop_loading()
    taken = _taken_section(running) if running is not None else None
    if running is None or runner is None:
        log.info("shutdown: no section was being synthesised")
    else:
        started = time.monotonic()
        await asyncio.get_running_loop().run_in_executor(None, runner.join, grace)
        if runner.alive:
            for job in admission.running_jobs():  # a preview inside a paused batch section too
                if not job.cancel_requested.is_set():
                    job.stopped_by_shutdown = True  # no `done`: the job resumes at the next start
                job.cancel_requested.set()
            admission.interrupt_running()
            log.warning("shutdown: %s ran past %.1f s; cancelled", _section_named(running, taken), grace)
        else:
            log.info("%s", _how_it_ended(running, taken, time.monotonic() - started))
    end_waiting_previews(scheduler)  # one whose section the drain let finish has no next one to run
    waiting = scheduler.queue_size()
    if waiting:
        log.info("shutdown: %d queued sections left; batch jobs resume on restart", waiting)


def _taken_section(job: Job) -> Section | None:
    """The engine's section of `job`: the last one handed out and not ended. Not `current_idx`, which
    follows the `synth` event: for a file-only job that waits behind the finisher's work (a section
    before's wav), and the drain said `section None` for a first section, the section before for a
    later one. Read once, as admission stops; None for one that ended as the shutdown began."""
    for section in reversed(job.sections):
        if section.taken and section.final is None:
            return section
    return None


def _how_it_ended(job: Job, taken: Section | None, seconds: float) -> str:
    """The drain's line for the section it let run. A DELETE during the drain stopped it (no end of its
    own, its wav not written: "let ... finish" said otherwise, or an error the cancel caused, its child
    killed at the `STOP`), unless it came as the section ended by itself (its wav written), too late to
    stop it: "its wav not written" said otherwise."""
    named = _section_named(job, taken)
    if not job.cancel_requested.is_set():
        return f"shutdown: let {named} finish ({seconds:.2f} s)"
    if taken is not None and (taken.final is None or job.failed_after_cancel):
        return f"shutdown: {named} stopped ({seconds:.2f} s): the job was cancelled, its wav not written"
    return f"shutdown: let {named} finish ({seconds:.2f} s): its job's cancel came too late to stop it"


def _section_named(job: Job, taken: Section | None) -> str:
    """The drain's words for the section `_taken_section` found."""
    if taken is None:
        return f"the section of job {job.id} that ended as the shutdown began"
    return f"section {taken.idx} of job {job.id}"


def end_waiting_previews(scheduler: Scheduler) -> None:
    """Previews that no section will run for any more (the shutdown began) end now, each pending
    section with the reason: their callers (`/synth`, `/ws`, OpenAI speech) waited out the drain and
    the connections' grace, then saw the connection closed without an answer."""
    journal = scheduler.journal
    if journal is None:
        return
    previews = scheduler.admission.take_waiting_previews()
    for job in previews:
        reason = str(QueueFull(SHUTTING_DOWN_REASON))
        for section in job.pending:
            journal.append(job, SectionError(section.idx, reason))
        scheduler.end_job(job)
    if previews:
        log.info("shutdown: ended %d queued previews (their callers may send them again)", len(previews))
