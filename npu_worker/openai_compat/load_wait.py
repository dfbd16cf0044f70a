"""A speech request made while the engine loads waits for the load, bounded, before its body is read.

An OpenAI SDK retries a 503 twice, about 3 s in all, and gives up; an engine takes seconds to minutes to
load, so every SDK call of a restart's first seconds failed. Waiting here (as the stream socket's
messages wait) makes such a call take longer instead. Nothing of the body is read meanwhile: a waiting
request holds its connection and what aiohttp reads ahead of a handler (bounded by its buffer's
high-water mark), never its body in memory. At most a quarter of `--max-connections` wait at once (`LoadWaiters`): a waiting request
is no connection the guard may close for room, so a flood during a load must leave the rest to others
(`/health` probes, requests once it has loaded); past that, `Loading` at once, as before.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from ..app_keys import SCHEDULER_KEY
from ..connection_hooks import body_left_unread
from ..errors import SHUTTING_DOWN_REASON
from ..http_compat.hang_up import stop_if_caller_gone
from ..protocol import QueueFull
from .core import LOAD_WAIT_SECONDS, shutting_down, still_loading


class LoadWaiters:
    """How many speech requests wait for the load now, and how many may."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.waiting = 0


LOAD_WAITERS_KEY = web.AppKey("load_waiters", LoadWaiters)


def load_waiters(max_connections: int) -> LoadWaiters:
    """A worker's waiters: a quarter of its connections at most, one at least."""
    return LoadWaiters(max(1, max_connections // 4))


# How often the wait looks (the scheduler has no event for the load's end, nor a caller for its hang-up).
LOAD_POLL_SECONDS = 0.05


async def wait_for_load(request: web.Request) -> None:
    """Return once the engine is loaded or failed to load, or `LOAD_WAIT_SECONDS` have passed (the
    handler's own checks then refuse as before: Loading, ModelLoadError). A shutdown ends the wait with
    its refusal (QueueFull), a caller that hangs up with ConnectionResetError (a 499)."""
    scheduler = request.app[SCHEDULER_KEY]
    waiters = request.app[LOAD_WAITERS_KEY]
    if not still_loading(scheduler) or waiters.waiting >= waiters.limit:
        return  # (the handler's checks refuse a request the wait has no room for: Loading)
    waiters.waiting += 1
    try:
        with body_left_unread(request):  # (not a slow body the guard may close for room)
            await _wait(request)
    finally:
        waiters.waiting -= 1


async def _wait(request: web.Request) -> None:
    scheduler = request.app[SCHEDULER_KEY]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LOAD_WAIT_SECONDS
    while still_loading(scheduler):
        if shutting_down(scheduler):
            raise QueueFull(SHUTTING_DOWN_REASON)
        stop_if_caller_gone(request)
        if loop.time() >= deadline:
            return
        await asyncio.sleep(LOAD_POLL_SECONDS)
