"""An accepting node's drain at shutdown: the previews its callers wait on (`/synth`, `/ws`, OpenAI
speech), which run on whichever engine node took them.

As a local worker's drain (`jobs/shutdown.py`): a preview not begun ends now; of a running one, the
section an engine node runs is given the grace to finish, and the others end after it (or at the
grace), each pending section with `QueueFull` (send it again) and its engine call stopped. Before,
the node's drain waited for nothing: a `/synth` caller was answered `Cancelled` at once while its
preview ran on, or stayed queued, in Redis, and its file was written at the node's restart, for
nobody.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from redis.exceptions import ResponseError

from ...errors import SHUTTING_DOWN_REASON
from ...protocol import Event, QueueFull, SectionError
from ..model import Job
from .follower import Followers
from .keys import CANCEL_CHANNEL
from .outage import REDIS_WAIT, reraise_if_cancelling
from .store import RedisJobs

log = logging.getLogger(__name__)
SHUTTING_DOWN = QueueFull(SHUTTING_DOWN_REASON)
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
    # Ended together: with Redis hung each end waits out its command timeout (5 s); one after another,
    # 4 previews took 21 s past the grace to stop (6 s together), 20 would take 100 s.
    begun = await asyncio.gather(*(_end_unless_running(jobs, job, node, observed) for job in previews))
    running = [(job, idx) for job, idx in zip(previews, begun, strict=True) if idx is not None]
    if running:
        await _sections_ended(running, grace)
        for job, idx in running:
            if not _ended(job, idx):
                log.warning(
                    "shutdown: section %s of preview %s still ran after %.1f s; ended", idx, job.id, grace
                )
        # then the rest, as a local worker's drain ends them once the running section is over: in idx
        # order after its `ok` (ended while it ran, they came before it), the engine node stopped
        await asyncio.gather(*(_end(jobs, job, node, observed) for job, _ in running))
        log.info("shutdown: let %d running sections of previews finish", len(running))
    if len(running) < len(previews):
        log.info(
            "shutdown: ended %d queued previews (their callers may send them again)",
            len(previews) - len(running),
        )
    await _finished(previews, DELIVERY)  # their followers publish the ends to the callers first


async def _end_unless_running(
    jobs: RedisJobs, job: Job, node: str, observed: Callable[[Job, Event], None]
) -> int | None:
    """`_end` a preview unless an engine node runs one of its sections now: that section's idx, left the
    grace to finish (as a local worker's drain; the rest end after it). Read from Redis: the copy here
    folds the log a read behind, and a `synth` logged just before the SIGTERM was missed (its section
    ended as queued, its engine stopped). Before, a preview with any section begun was left to run
    whole, all 8 sections of a `/ws` request up to the grace, where a local worker ends sections 1-7
    with `QueueFull`."""
    try:
        shared = await jobs.load(job.id)
    except (*REDIS_WAIT, ResponseError) as exc:  # no end would be taken either: let go, as `_end` does
        reraise_if_cancelling()
        log.warning("shutdown: preview %s could not be ended in Redis (%s)", job.id, exc)
        return _running_section(job)  # the copy here: given the grace if it saw a section begin
    if shared is None or shared.finished:
        return None
    running = _running_section(shared)
    if running is None:
        await _end(jobs, job, node, observed)
    return running


def _running_section(job: Job) -> int | None:
    """The section whose `synth` is the last logged, if it has not ended: the one an engine node runs."""
    section = job.section(job.current_idx) if job.current_idx is not None else None
    return None if section is None or section.finished else section.idx


async def _end(jobs: RedisJobs, job: Job, node: str, observed: Callable[[Job, Event], None]) -> None:
    """Each pending section fails with `QueueFull`, and the engine node running it stops (the cancel
    channel)."""
    if await _end_sections(jobs, job, [section.idx for section in job.pending], node, observed):
        try:
            await jobs.redis.publish(CANCEL_CHANNEL, job.id)
        except (*REDIS_WAIT, ResponseError) as exc:
            reraise_if_cancelling()
            log.warning("shutdown: preview %s could not be ended in Redis (%s)", job.id, exc)


async def _end_sections(
    jobs: RedisJobs, job: Job, indexes: list[int], node: str, observed: Callable[[Job, Event], None]
) -> bool:
    """Each of `indexes` fails with `QueueFull` (FINAL: once, whatever an engine node logs meanwhile;
    the last one logs `done`): whether Redis took the ends."""
    try:
        for idx in indexes:
            error = SectionError(idx, str(SHUTTING_DOWN))
            seq, done = await jobs.final_ending(job.id, idx, error, ok=False, node=node, advance=False)
            for event in (error if seq else None, done):
                if event is not None:
                    observed(job, event)  # /metrics: counted once in the cluster, where it is logged
    except (*REDIS_WAIT, ResponseError) as exc:  # its caller is let go without a `done`, as before
        reraise_if_cancelling()
        log.warning("shutdown: preview %s could not be ended in Redis (%s)", job.id, exc)
        return False
    return True


def _ended(job: Job, idx: int) -> bool:
    section = job.section(idx)
    return job.finished or section is None or section.finished


async def _sections_ended(running: list[tuple[Job, int]], within: float) -> None:
    """Until each running section has its final event here (its follower read it), or `within` s."""
    deadline = asyncio.get_running_loop().time() + within
    while any(not _ended(job, idx) for job, idx in running) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(POLL)


async def _finished(previews: list[Job], within: float) -> None:
    """Until every one of `previews` has its `done` here (their followers read it), or `within` s."""
    deadline = asyncio.get_running_loop().time() + within
    while any(not job.finished for job in previews) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(POLL)
