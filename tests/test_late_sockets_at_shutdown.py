"""A WebSocket whose handler runs only after the shutdown closed the open sockets (its handshake was
accepted before the listener closed) is told and closed at once, like the others."""

from __future__ import annotations

import aiohttp
import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.ws_server import close_sockets
from tests.timing import seconds


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
async def test_a_socket_opened_after_the_shutdown_closed_the_others_gets_1001_at_once(worker, path):
    """It served `QueueFull` refusals to a caller who could not tell why, until aiohttp cut it (1006)."""
    client = await worker()
    await client.app[SCHEDULER_KEY].drain(grace=seconds(5))
    assert await close_sockets(client.app) == (0, 0)  # what the shutdown does after the drain
    ws = await client.ws_connect(path)
    message = await ws.receive(timeout=seconds(5))
    assert (message.type, message.data, message.extra) == (
        aiohttp.WSMsgType.CLOSE,
        aiohttp.WSCloseCode.GOING_AWAY,
        "the worker is shutting down; send the request again once it is back",
    )
