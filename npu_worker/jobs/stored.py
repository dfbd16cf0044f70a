"""A kept job read back whole from its folder (`result`, `events`, `audio` of a finished job).

A finished job is kept as a `KeptJob`, its status only; the calls that need its sections and log read
them again. Apart from the scheduler because what such a read may meet (a folder removed, a log
changed since) has its own answers: JobNotFound, StateUnavailable, never a log without its `done`.
"""

from __future__ import annotations

import logging

from ..protocol import JobNotFound, StateUnavailable
from .model import Job, KeptJob
from .registry import JobRegistry
from .store import JobStore

log = logging.getLogger(__name__)


def read_whole(job: Job | KeptJob, store: JobStore, registry: JobRegistry) -> Job:
    """The whole job, its sections and log read again from its folder for a `KeptJob` (blocking
    I/O: call from a thread). A folder removed meanwhile is JobNotFound (and the job forgotten);
    one that no longer reads as the job that finished is StateUnavailable, never a log without
    its `done` (a replay would wait for it for ever)."""
    if isinstance(job, Job):
        return job
    gone = JobNotFound(f"no job {job.id}: its folder was removed from the state directory")
    try:
        stored = store.load(job.id)
    except FileNotFoundError:
        registry.remove(job.id)
        raise gone from None
    except (OSError, ValueError, RecursionError) as exc:  # msgspec's errors are ValueErrors
        if registry.get(job.id) is not job:  # retention removed it while it was read
            raise gone from None
        log.warning("job %s could not be read again: %s", job.id, exc)
        raise StateUnavailable(f"job {job.id} could not be read from the state directory: {exc}") from None
    if (stored.status, stored.ok_count, stored.fail_count) != (job.status, job.ok_count, job.fail_count):
        if registry.get(job.id) is not job:
            raise gone
        log.warning("job %s: its log in the state directory no longer reads as it ended", job.id)
        raise StateUnavailable(f"job {job.id}: its log in the state directory was changed or damaged")
    return stored
