"""A shared job recorded and queued in Redis by one script, and what its caller is told when that fails:
the cluster's queue bound reached (`QueueFull`), Redis away or full, or a queue key not of ours
(`QueueUnavailable`).

Apart from the scheduler because it is the one write of a submission and its refusals; the scheduler
checks the request and builds the job before, and logs its `start` after.
"""

from __future__ import annotations

import logging

from redis.exceptions import ResponseError

from ...errors import counted
from ...protocol import QueueFull, QueueUnavailable, Start
from ..model import Job
from ..stats import Stats
from .outage import REDIS_WAIT, redis_unreachable, reraise_if_cancelling
from .store import RedisJobs

log = logging.getLogger(__name__)


async def queue_shared_job(
    jobs: RedisJobs, job: Job, node: str, start: Start, *, max_queue: int, engines: int, stats: Stats
) -> None:
    """Record and queue `job`, accepted by `node`, with `engines` engine nodes alive to run it."""
    # A preview (`/ws`, whatever its `audio`; `/synth` and OpenAI speech are one section) runs its
    # sections one after another, each queued once the previous one is final: its events (and audio)
    # come in idx order, as on a local queue. With `audio: false` it had the batch's window: two
    # engine nodes took sections 0 and 1 at once, `synth 1, ok 1` before `ok 0`. Batches spread over
    # the engine nodes (their sections' events interleave: docs/protocol.md).
    window = 1 if job.preview else max(2, engines + 1)
    try:
        created = await jobs.create(job, node, start, max_queue=max_queue, window=window)
    except REDIS_WAIT as exc:  # down, or full (its maxmemory reached)
        reraise_if_cancelling()
        raise redis_unreachable(exc) from exc
    except ResponseError as exc:  # a value not of ours in a queue key (any local process can write)
        log.error("job %s refused: Redis answered %s", job.id, exc)
        raise QueueUnavailable(
            "the shared queue refused the job (see the node's log); retry shortly"
        ) from exc
    if created < 0:
        stats.count("jobs_refused")
        waiting = counted(-created - 1, "section is waiting", "sections are waiting")
        raise QueueFull(f"{waiting} in the cluster (bound {max_queue})")
