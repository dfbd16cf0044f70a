"""An accepting node's drain at shutdown: the previews its callers wait on (`/synth`, `/ws`, OpenAI
speech), which run on whichever engine node took them.

As a local worker's drain (`jobs/shutdown.py`): a preview not begun ends now, a running one is given
the grace to finish, and what is left then ends too, each pending section with `QueueFull` (send it
again) and its engine call stopped. Before, the node's drain waited for nothing: a `/synth` caller was
answered `Cancelled` at once while its preview ran on, or stayed queued, in Redis, and its file was
written at the node's restart, for nobody.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from redis.exceptions import ResponseError

from ...protocol import Event, QueueFull, SectionError
from ..model import QUEUED, Job
from .follower import Followers
from .keys import CANCEL_CHANNEL
from .outage import REDIS_WAIT, reraise_if_cancelling
from .store import RedisJobs

log = logging.getLogger(__name__)
SHUTTING_DOWN = QueueFull("the worker is shutting down; send the request again")
DELIVERY = 1.0  # at most this long for the followers to pass the ends on, before the streams are ended
POLL = 0.05


async def drain_previews(
    jobs: RedisJobs, followers: Followers, node: str, grace: float, observed: Callable[[Job, Event], None]
) -> None:
    """End the previews followed here for a caller (all accepted here: no one re-attaches to a preview;
    one whose caller has gone was cancelled by it)."""
    previews = [job for job in followers.live_jobs() if job.preview and job.subscribers and not job.finished]
    if not previews:
        return
    looks_queued = [job for job in previews if job.status == QUEUED]
    running = [job for job in previews if job.status != QUEUED]
    # Ended together: with Redis hung each end waits out its command timeout (5 s); one after another,
    # 4 previews took 21 s past the grace to stop (6 s together), 20 would take 100 s.
    begun = await asyncio.gather(*(_end_unless_begun(jobs, job, node, observed) for job in looks_queued))
    queued = [job for job, left in zip(looks_queued, begun, strict=True) if not left]
    running += [job for job, left in zip(looks_queued, begun, strict=True) if left]
    if running:
        await _finished(running, grace)
        cut = [job for job in running if not job.finished]
        for job in cut:
            log.warning("shutdown: preview %s still ran after %.1f s; ended", job.id, grace)
        await asyncio.gather(*(_end(jobs, job, node, observed) for job in cut))
        log.info("shutdown: let %d running previews finish", len(running) - len(cut))
    if queued:
        log.info("shutdown: ended %d queued previews (their callers may send them again)", len(queued))
    await _finished(previews, DELIVERY)  # their followers publish the ends to the callers first


async def _end_unless_begun(
    jobs: RedisJobs, job: Job, node: str, observed: Callable[[Job, Event], None]
) -> bool:
    """`_end` a preview that looks queued here, unless Redis says an engine node has begun it: whether
    it was left to run. The copy here folds the log a read behind (an XREAD round trip, longer on a
    loaded node), and a preview whose `synth` was logged just before the SIGTERM was ended as queued:
    its engine stopped, its caller told `QueueFull` instead of given the grace to finish it."""
    try:
        shared = await jobs.load(job.id)
    except (*REDIS_WAIT, ResponseError) as exc:  # no end would be taken either: let go, as `_end` does
        reraise_if_cancelling()
        log.warning("shutdown: preview %s could not be ended in Redis (%s)", job.id, exc)
        return False
    if shared is not None and shared.status != QUEUED:
        return True
    await _end(jobs, job, node, observed)
    return False


async def _end(jobs: RedisJobs, job: Job, node: str, observed: Callable[[Job, Event], None]) -> None:
    """Each pending section fails with `QueueFull` (FINAL: once, whatever an engine node logs meanwhile;
    the last one logs `done`), and the engine node running it stops (the cancel channel)."""
    try:
        for section in job.pending:
            error = SectionError(section.idx, str(SHUTTING_DOWN))
            seq, done = await jobs.final_ending(
                job.id, section.idx, error, ok=False, node=node, advance=False
            )
            for event in (error if seq else None, done):
                if event is not None:
                    observed(job, event)  # /metrics: counted once in the cluster, where it is logged
        await jobs.redis.publish(CANCEL_CHANNEL, job.id)
    except (*REDIS_WAIT, ResponseError) as exc:  # its caller is let go without a `done`, as before
        reraise_if_cancelling()
        log.warning("shutdown: preview %s could not be ended in Redis (%s)", job.id, exc)


async def _finished(previews: list[Job], within: float) -> None:
    """Until every one of `previews` has its `done` here (their followers read it), or `within` s."""
    deadline = asyncio.get_running_loop().time() + within
    while any(not job.finished for job in previews) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(POLL)
