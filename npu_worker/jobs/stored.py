"""A kept job read back whole from its folder (`result`, `events` of a finished job), and a finished
section's wav opened (`audio`).

A finished job is kept as a `KeptJob`, its status only; the calls that need its sections and log read
them again. Apart from the scheduler because what such a read may meet (a folder removed, a log
changed since) has its own answers: JobNotFound, StateUnavailable, never a log without its `done`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import BinaryIO

from ..files import TooLarge
from ..paths import PathPolicy
from ..protocol import AudioNotFound, JobNotFound, Progress, StateUnavailable, WorkerError
from .model import Job, KeptJob
from .registry import JobRegistry
from .shared_copies import SharedCopies
from .store import JobStore

log = logging.getLogger(__name__)

# What `GET .../audio` reads at most: a section's wav is minutes of 24 kHz audio (tens of MB); the
# bound only keeps a file the worker did not make from being read whole.
MAX_SECTION_WAV_BYTES = 512 * 1024 * 1024


def read_whole(job: Job | KeptJob, store: JobStore, registry: JobRegistry, copies: SharedCopies) -> Job:
    """The whole job, its sections and log read again from its folder for a `KeptJob` (blocking
    I/O: call from a thread), one copy for the readers meanwhile while its files stay as they were
    (`shared_copies.py`: the caller changes none of it). A folder removed meanwhile is JobNotFound
    (and the job forgotten); one that no longer reads as the job that finished is StateUnavailable,
    never a log without its `done` (a replay would wait for it for ever)."""
    if isinstance(job, Job):
        return job
    gone = JobNotFound(f"no job {job.id}: its folder was removed from the state directory")
    try:
        stored = _shared_load(job.id, store, copies)
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


def read_replay(job: Job | KeptJob, store: JobStore, registry: JobRegistry, copies: SharedCopies) -> Job:
    """As `read_whole`, as a replay of its events holds it: a finished job's log only, the view its
    readers share (`SharedCopies.log_only`), taken while one is held for its files as they are now, not
    read whole again (each reader read again once the copy's linger had passed held a log of its own)."""
    if isinstance(job, KeptJob) and (stamp := store.stamp(job.id)) is not None:
        view = copies.held_log_only((job.id, stamp))
        if view is not None:
            return view
    whole = read_whole(job, store, registry, copies)
    if whole.finished and whole.done_event is not None:  # (a Redis node follows an unfinished copy)
        return copies.log_only(whole)
    return whole


def _shared_load(job_id: str, store: JobStore, copies: SharedCopies) -> Job:
    """The job as its files hold it now: the copy read from them as they are, if one is held, else
    read (and shared if they did not change while it was read, and it is finished)."""
    stamp = store.stamp(job_id)
    if stamp is None:
        return store.load(job_id)
    job = copies.get(
        (job_id, stamp), lambda: store.load(job_id), lambda job: job.finished and store.stamp(job_id) == stamp
    )
    assert job is not None  # (`load` returns a job or raises)
    return job


def no_audio(job: Job, idx: int) -> WorkerError:
    """Why `idx` has no audio to give: a section the job does not have is said so (a caller's off-by-one
    read as a section not made yet), else the section has none (not made yet, failed, or removed)."""
    if job.section(idx) is None:
        return AudioNotFound(f"job {job.id} has no section {idx}")
    return AudioNotFound(f"job {job.id} has no audio for section {idx}")


async def open_section_audio(job: Job, idx: int, paths: PathPolicy) -> BinaryIO:
    """The wav of a finished section: its file, open (the caller sends it in pieces and closes
    it); AudioNotFound if it has none."""
    section = job.section(idx)
    final = section.final if section is not None else None
    if not isinstance(final, Progress) or final.wav_path is None:
        raise no_audio(job, idx)
    try:
        return await asyncio.to_thread(paths.open_output, final.wav_path, MAX_SECTION_WAV_BYTES)
    except (OSError, TooLarge) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise AudioNotFound(f"the wav of section {idx} is gone or was replaced: {reason}") from exc
