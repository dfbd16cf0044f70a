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
from typing import Any

from aiohttp import web

from ..app_keys import SCHEDULER_KEY
from ..connection_hooks import body_left_unread
from ..engine.base import EngineInfo
from ..http_compat.hang_up import stop_if_caller_gone, until_caller_gone
from .core import LOAD_WAIT_SECONDS, engine_info, still_loading, wait_while_loading


class LoadWaiters:
    """How many requests (speech, batch, voice) and stream socket messages wait for the load now, and
    how many may."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.waiting = 0


LOAD_WAITERS_KEY = web.AppKey("load_waiters", LoadWaiters)


def load_waiters(max_connections: int) -> LoadWaiters:
    """A worker's waiters: a quarter of its connections at most, one at least."""
    return LoadWaiters(max(1, max_connections // 4))


async def wait_for_load(request: web.Request) -> None:
    """Return once the engine is loaded or failed to load, or `LOAD_WAIT_SECONDS` have passed (the
    handler's own checks then refuse as before: Loading, ModelLoadError). A shutdown ends the wait with
    its refusal (QueueFull), a caller that hangs up with ConnectionResetError (a 499). Woken by the
    load's end (`Scheduler.load_signal`), where it looked every 50 ms."""
    if not still_loading(request.app[SCHEDULER_KEY]):
        return
    gone = asyncio.ensure_future(until_caller_gone(request))
    try:
        with body_left_unread(request):  # (not a slow body the guard may close for room)
            stop_if_caller_gone(request)
            await wait_in_turn(request.app, gone)
    finally:
        gone.cancel()


async def loaded_engine(app: web.Application) -> EngineInfo:
    """What runs, after a wait as a speech request's (bounded, among the waiters, ended by the shutdown's
    QueueFull): a stream socket's message (a socket that closes cancels its wait); Loading past it."""
    await wait_in_turn(app)
    return engine_info(app[SCHEDULER_KEY])


async def wait_in_turn(app: web.Application, gone: asyncio.Future[Any] | None = None) -> None:
    """`wait_while_loading`, counted among the waiters; none when they are all taken (Loading follows)."""
    scheduler = app[SCHEDULER_KEY]
    waiters = app[LOAD_WAITERS_KEY]
    if not still_loading(scheduler) or waiters.waiting >= waiters.limit:
        return  # (the handler's checks refuse a request the wait has no room for: Loading)
    waiters.waiting += 1
    try:
        await wait_while_loading(scheduler, LOAD_WAIT_SECONDS, gone)
    finally:
        waiters.waiting -= 1
