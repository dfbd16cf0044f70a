"""What a Redis outage (or a full Redis) means to a node: the errors that are one, what a caller is
told, and how a loop waits it out without swallowing its own cancellation.

Apart from `store.py` because every part of a node (engine node, writer, follower, journal,
heartbeat, retention) handles Redis being away the same way, whatever command it sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError, ReadOnlyError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ...protocol import QueueUnavailable, WorkerError
from .pools import ConnectionsBusy

log = logging.getLogger(__name__)
T = TypeVar("T")
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)
# Redis at its `maxmemory` (policy noeviction) refuses every write (OOM) until jobs end or are removed:
# the node's loops wait it out as they wait out an outage (their work stays pending, nothing is lost);
# a request is told so by name.
REDIS_WAIT = (*REDIS_DOWN, OutOfMemoryError)


def redis_unreachable(exc: BaseException) -> WorkerError:
    """What a caller is told while Redis is down (or full): the kind of failure, not the address the
    client library names (`Error 111 connecting to 10.0.0.5:6379`); the node's log has the details."""
    log.debug("Redis unreachable: %s", exc)
    if isinstance(exc, OutOfMemoryError):
        return QueueUnavailable("Redis is full (its maxmemory is reached); retry once jobs have ended")
    if isinstance(exc, ConnectionsBusy):  # Redis is up: this node's connections to it were all in use
        return QueueUnavailable("this node's connections to Redis are all in use; retry shortly")
    return QueueUnavailable(f"Redis is unreachable ({type(exc).__name__}); retry shortly")


async def cancellable(read: Any) -> Any:
    """Await a blocking Redis read so that cancelling the task ends it.

    redis-py turns a cancellation that lands inside a blocking read into a connection error; a loop
    that retries on connection errors would then never end (shutdown hung). Re-raise it as the
    cancellation it was."""
    try:
        return await read
    except REDIS_DOWN:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise asyncio.CancelledError from None
        raise


def reraise_if_cancelling() -> None:
    """Called in a retry loop's Redis-error handler, and at the top of each loop of a long-lived task: a
    cancelled task must end, not retry (see above). redis-py's own retry of a connection error can
    swallow a cancellation inside a command; the task still says it is being cancelled."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def retried(make: Callable[[], Awaitable[T]], what: str = "") -> T:
    """`make()` until Redis answers (back-off 50 ms doubling to 1 s), also while it is full; a
    cancellation always ends it."""
    delay = 0.05
    while True:
        try:
            return await make()
        except REDIS_WAIT as exc:
            reraise_if_cancelling()
            if what:
                log.debug("%s: Redis unreachable (%s); retrying", what, exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


async def skippable(make: Callable[[], Awaitable[object]], what: str) -> None:
    """A clean-up a node may leave undone (what it frees ages out or retention removes it): Redis away,
    full, refusing every write (READONLY) or answering an error (WRONGTYPE, NOPERM) is one WARNING line,
    never the task's end. Only outages were caught: a refusal ended the task with a traceback in the log
    (a follower's, a slow listener's failure)."""
    try:
        await make()
    except (*REDIS_WAIT, ResponseError) as exc:
        reraise_if_cancelling()
        log.warning("%s left undone: Redis answered %s", what, f"{type(exc).__name__}: {exc}"[:300])


# What Redis answers to every write, whatever the key, while it cannot take one (a failed snapshot with
# stop-writes-on-bgsave-error, a replica, a script running past its time, a master gone): a wait, never
# one entry's failure (`refuses_every_write`).
EVERY_WRITE_REFUSED = ("MISCONF", "READONLY", "BUSY", "MASTERDOWN", "NOREPLICAS", "TRYAGAIN", "CLUSTERDOWN")


def refuses_every_write(exc: BaseException) -> bool:
    """Redis away or full, or refusing every write for now: the work waits (the writer's entry stays
    pending), where an answer about one key (WRONGTYPE, a planted value) fails only what used that key."""
    if isinstance(exc, (*REDIS_WAIT, ReadOnlyError)):
        return True
    return isinstance(exc, ResponseError) and _answered_code(exc) in EVERY_WRITE_REFUSED


# How often a loop that waits while Redis refuses every write says it still does (the first line and the
# last are said at once).
REFUSAL_REMINDER_SECONDS = 60.0


class WriteRefusals:
    """One loop's account of Redis refusing every write for a while (a replica promoted or demoted:
    READONLY; MISCONF, BUSY, …): one WARNING as it starts, a reminder at most every
    `REFUSAL_REMINDER_SECONDS` while it lasts, one line as it ends. Each refusal was an ERROR, every
    2 s from each loop, for as long as it lasted, and nothing said it had ended."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.since: float | None = None  # (monotonic) the first refusal of the one under way
        self._said = 0.0

    def refused(self, exc: BaseException) -> None:
        now = time.monotonic()
        if self.since is None:
            self.since = self._said = now
            log.warning("%s: Redis refuses every write for now (%s); waiting", self.who, exc)
        elif now - self._said >= REFUSAL_REMINDER_SECONDS:
            self._said = now
            log.warning(
                "%s: Redis still refuses every write, for %.0f s now (%s)", self.who, now - self.since, exc
            )

    def ended(self) -> None:
        """Redis took a write (or answered a step) again: said once, with how long it refused."""
        if self.since is not None:
            log.warning("%s: Redis takes writes again, after %.0f s", self.who, time.monotonic() - self.since)
            self.since = None


async def taken(make: Callable[[], Awaitable[T]], refusals: WriteRefusals) -> T:
    """`retried`, and waited on while Redis refuses every write for now (a replica: READONLY; MISCONF,
    BUSY), said by `refusals`: the PCM sender's entries and a section's `synth`, where the refusal
    dropped the entries (the listeners heard a gap) or the `synth` (its callers never saw it start)."""
    delay = 0.05
    while True:
        try:
            answer = await retried(make, refusals.who)
        except ResponseError as exc:
            if not refuses_every_write(exc):
                raise
            refusals.refused(exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
            continue
        refusals.ended()
        return answer


def _answered_code(exc: ResponseError) -> str:
    """The code Redis answered (`BUSY`), also inside a pipeline, where redis-py writes the command first
    (`Command # 1 (EXISTS npu:job:…) of pipeline caused error: BUSY …`: read as one entry's failure, a
    sound section was failed). After the last such prefix: the command may hold a caller's job id."""
    return str(exc).rpartition(" of pipeline caused error: ")[2].split(" ", 1)[0]


def lost_groups(exc: ResponseError) -> bool:
    """Redis lost its data (a restart without persistence, FLUSHALL, a key evicted or deleted): the
    consumer groups are gone and must be made again. A read that was blocked on the stream when it
    went is answered UNBLOCKED, any later one NOGROUP."""
    return "NOGROUP" in str(exc) or "UNBLOCKED" in str(exc)
