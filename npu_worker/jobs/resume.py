"""Start-up: the kept jobs read back and the unfinished ones resumed, oldest created first.

Apart from the scheduler because it runs once, in a task of its own after the socket serves
(`recovery.py` says where it stands meanwhile): the jobs are read off the loop, a job killed before
its `start` gets it once the engine has loaded, and every job is ended or queued again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from ..engine.base import EngineInfo
from ..protocol import Start, StateUnavailable
from .model import Job
from .recovery import RecoveryStopped
from .retention import remove_crash_leftovers

if TYPE_CHECKING:
    from .scheduler import Scheduler

log = logging.getLogger(__name__)


async def resume_kept_jobs(scheduler: Scheduler) -> None:
    """Read every kept job (off the loop), then resume the unfinished ones, oldest first."""
    loop = asyncio.get_running_loop()
    recovery = scheduler.recovery
    started = time.monotonic()
    try:
        jobs = await loop.run_in_executor(None, _read_kept_jobs, scheduler)
        unstarted = [job for job in jobs if not any(isinstance(e.event, Start) for e in job.log)]
        if unstarted:  # killed between its job.json and its `start`: it gets that `start` first
            info = await _engine_info(scheduler)
            await loop.run_in_executor(None, _log_starts, scheduler, unstarted, info)
        for job in jobs:
            if job.cancel_requested.is_set() or not job.pending:
                # No pending section: its `done` was lost (a kill between the last section and it, or
                # a full disk); queued, it was never picked, and `interrupted` and running for ever.
                why = "was cancelled while a section ran" if job.pending else "had no section left"
                log.info("job %s %s: ended, not resumed", job.id, why)
                await loop.run_in_executor(None, scheduler.end_job, job)  # its `done` is persisted
                continue
            log.info("job %s was interrupted: %d sections to resume", job.id, len(job.pending))
            scheduler.admission.enqueue(job)
    except RecoveryStopped:
        return
    except Exception as exc:  # noqa: BLE001 - said on /health (500) and refused, not a dead worker
        log.exception("the kept jobs could not be read")
        recovery.error = StateUnavailable(f"the kept jobs could not be read: {exc}")
    recovery.running = False
    scheduler.load_signal.changed()
    took = time.monotonic() - started
    log.info(
        "read %d job folders in %.2f s; %d jobs kept", recovery.total or 0, took, len(scheduler.registry)
    )


async def _engine_info(scheduler: Scheduler) -> EngineInfo | None:
    """What the engine says once loaded (None: it failed to); a `start` names it."""
    runner = scheduler.runner
    assert runner is not None
    while runner.info is None and runner.load_error is None:
        if scheduler.recovery.stop.is_set():
            raise RecoveryStopped
        await asyncio.sleep(0.02)
    return runner.info


def _log_starts(scheduler: Scheduler, jobs: list[Job], info: EngineInfo | None) -> None:
    """The `start` a job's log opens with, for jobs whose log has none (before any other event of
    theirs: lookups wait, `Loading`, until the engine has loaded). An engine that failed to load
    runs nothing: no `start` then."""
    assert scheduler.journal is not None
    if info is None:
        return
    for job in jobs:
        log.info("job %s was interrupted before its start was logged: logging it now", job.id)
        scheduler.journal.append(job, Start(job.total, info.backend, info.device, job.id, info.sample_rate))


def _count_job_bytes(scheduler: Scheduler) -> None:
    """What the job folders hold, counted once (files of no kept job left out: never removed, they
    would take room for good), and finished jobs removed where it passes the bound (a bound lowered
    since the last run): before any job writes there."""
    job_bytes, retention = scheduler.job_bytes, scheduler.retention
    assert retention is not None
    job_bytes.recount()
    job_bytes.uncount(set(job_bytes.job_ids()) - {job.id for job in scheduler.registry.snapshot()})
    if 0 < job_bytes.max_bytes < job_bytes.total:
        retention.make_room(job_bytes.total - job_bytes.max_bytes)


def _read_kept_jobs(scheduler: Scheduler) -> list[Job]:
    """Blocking start-up work: every stored job, crash leftovers, retention."""
    store, registry = scheduler.store, scheduler.registry
    jobs = store.load_all(scheduler.recovery.progress)
    for job in jobs:
        registry.add(job)
    remove_crash_leftovers(jobs, [scheduler.cache.directory, *(store.job_dir(job.id) for job in jobs)])
    scheduler.voices.remove_crash_leftovers()  # under its lock: uploads are taken while this runs
    assert scheduler.retention is not None
    scheduler.retention.sweep()
    _count_job_bytes(scheduler)
    unfinished = [job for job in jobs if isinstance(job, Job) and not job.finished]
    if scheduler.journal is not None:  # before any event of this run: seqs jump where the last lost some
        scheduler.journal.begin_run(unfinished)
    return unfinished
