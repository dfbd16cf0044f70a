"""Ending a shared job from the node a caller talks to: a cancel (logged once, in Redis, and published
to the engine node running it), one for a caller no one hears any more, and a slow listener's failure.

Apart from the scheduler because each is a few Redis calls on one job with the counts they make; the
scheduler only decides when (a caller's cancel, a lost stream, a listener that fell behind).
"""

from __future__ import annotations

import contextlib
import logging

from redis.exceptions import ResponseError

from ...protocol import SectionError, SlowConsumer
from ..model import Job
from ..observer import SchedulerObserver
from ..stats import Stats
from .outage import WriteRefusals, reraise_if_cancelling, skippable, taken
from .spec import BadSpec, job_from_spec, spec_node
from .store import RedisJobs

log = logging.getLogger(__name__)


async def cancel_shared_job(jobs: RedisJobs, job_id: str, stats: Stats, observer: SchedulerObserver) -> bool:
    """Stop a job on every node; True if it was still running or queued (this node then counts it)."""
    found = await jobs.spec(job_id)
    if found is None or found[1]:
        return False
    done = await jobs.cancel_ending(job_id, spec_node(found[0]))
    if done is None:
        return False
    stats.count("jobs_cancelled")
    with contextlib.suppress(BadSpec):  # /metrics: this node ended it
        observer.event(job_from_spec(found[0]), done)
    return True


async def cancel_unheard(jobs: RedisJobs, job_id: str, stats: Stats, observer: SchedulerObserver) -> None:
    """`cancel_shared_job` for a job no caller hears any more, waited on while Redis is away, full or
    refuses every write for now (`outage.taken`; a task of the node's, cancelled at its stop): it was
    dropped then, and the preview ran on for nobody once Redis took writes again. Any other answer
    (WRONGTYPE, a spec not of ours) leaves it to its end."""
    refusals = WriteRefusals(f"job {job_id}: its cancel")
    try:
        await taken(lambda: cancel_shared_job(jobs, job_id, stats, observer), refusals)
    except (ResponseError, BadSpec) as exc:
        reraise_if_cancelling()
        log.warning("job %s: its cancel could not be logged (%s)", job_id, exc)


async def fail_slow_listener(jobs: RedisJobs, job: Job, stats: Stats, observer: SchedulerObserver) -> None:
    """A listener fell behind: the job gets a `SlowConsumer` error and is cancelled; Redis away, full or
    refusing (READONLY, WRONGTYPE, NOPERM) leaves it to its end (`outage.skippable`: one WARNING, where a
    refusal ended the node's task with a traceback)."""
    error = SlowConsumer("the client did not read audio fast enough")

    async def failed() -> None:
        slow = SectionError(job.current_idx, str(error))
        if await jobs.append(job.id, slow):
            observer.event(job, slow)  # /metrics, as a local queue counts it
        await cancel_shared_job(jobs, job.id, stats, observer)

    await skippable(failed, f"job {job.id}: its slow listener's SlowConsumer and cancel")
