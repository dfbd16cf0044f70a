"""The retry loop shared by a node's queue consumers (the engine node, the output writer).

One consumer reads one Redis consumer group. It survives Redis outages: it waits with back-off and
logs once; a Redis at its `maxmemory` (writes refused) the same way, its own items read again after; a
Redis refusing every write for now (a replica: READONLY) too, said as it starts and as it ends
(`WriteRefusals`). It survives Redis losing its data: the groups are made again. After either, it first takes
back its own pending items. A cancellation always ends it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import OutOfMemoryError, ResponseError

from .outage import REDIS_DOWN, WriteRefusals, lost_groups, refuses_every_write, reraise_if_cancelling
from .store import RedisJobs

log = logging.getLogger(__name__)


class QueueConsumer:
    """Base of the node's consumers: `redis_ok` for /health, `_own` = read own pending items next."""

    jobs: RedisJobs
    node: str
    redis_ok: bool
    _own: bool
    _regroup: bool

    async def _consume(self, step: Callable[[], Awaitable[bool]], label: str) -> None:
        """Run `step` until it returns False, through outages and lost groups."""
        delay = 0.05
        refusals = WriteRefusals(f"{label} {self.node}")
        while True:
            reraise_if_cancelling()  # redis-py may retry away a cancellation that hit a read
            try:
                if self._regroup:
                    await self.jobs.ensure_groups(self.node)
                    self._regroup = False
                if not await step():
                    return
                self.redis_ok, delay = True, 0.05
                refusals.ended()
            except OutOfMemoryError as exc:
                # The step's items stay pending (a writer's `ready` entry has no XAUTOCLAIM: unread
                # again, its section was never `ok` and its job never ended).
                if self.redis_ok:
                    log.warning("%s %s: Redis is full (%s); waiting", label, self.node, exc)
                self.redis_ok, self._own = False, True
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
            except ResponseError as exc:
                if lost_groups(exc):
                    log.warning(
                        "%s: the queue's groups are gone (Redis lost its data); making them again", self.node
                    )
                    self._regroup = True
                    continue
                if refuses_every_write(exc):  # (a replica, a slow script: no group lost, its items wait)
                    refusals.refused(exc)
                    self._own = True
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                # Never a consumer that ends in silence (the node would look alive and take no work):
                # say what Redis answered and try again, more slowly each time.
                log.error("%s %s: Redis answered %s; trying again", label, self.node, exc)
                self._regroup = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            except REDIS_DOWN as exc:
                reraise_if_cancelling()
                if self.redis_ok:
                    log.warning("%s %s: Redis unreachable (%s)", label, self.node, exc)
                self.redis_ok, self._own = False, True
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
