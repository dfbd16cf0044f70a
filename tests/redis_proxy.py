"""A Redis URL that reaches the test's redis-server through a proxy of the test's own (a link that loses or
holds replies, or refuses large arguments): the proxy's server, its pumps' tasks and their ends, once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

Proxy = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int, set[asyncio.Task[None]]], Awaitable[None]]


@contextlib.asynccontextmanager
async def redis_through(proxy: Proxy, redis_port: int) -> AsyncIterator[str]:
    """`redis://` at a loopback port whose connections `proxy` serves (it adds its pumps to the set, each
    cancelled and awaited when the test is done: the proxy outlives the node's stop)."""
    pumps: set[asyncio.Task[None]] = set()
    server = await asyncio.start_server(lambda r, w: proxy(r, w, redis_port, pumps), "127.0.0.1", 0)
    try:
        yield f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
    finally:
        server.close()
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
