"""A WebSocket message must finish arriving within --body-timeout (ws_server/message_deadline.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from tests.timing import seconds, until

PATHS = ["/ws", "/v1/audio/speech/stream"]


async def fragments_then_a_trickle(first: int, every: float):
    """A text message that starts with `first` characters and then never ends (one more every `every`)."""
    yield "x" * first
    while True:
        await asyncio.sleep(every)
        yield "x"


@pytest.mark.parametrize("path", PATHS)
async def test_a_message_that_never_finishes_loses_its_connection(served, path):
    """aiohttp kept the unfinished message (up to --max-body-bytes) for as long as its peer trickled it:
    20 such sockets held 173 MiB, with no bound in time."""
    listener = await served(body_timeout=0.5)
    ws = await websockets.connect(f"ws://127.0.0.1:{listener.port}{path}", max_size=None)
    sending = asyncio.create_task(ws.send(fragments_then_a_trickle(100_000, 0.2)))
    try:
        await until(lambda: not listener.guard.open, "the connection to be dropped")
    finally:
        sending.cancel()
        ws.transport.abort()


@pytest.mark.parametrize("path", PATHS)
async def test_a_slow_message_that_finishes_within_the_body_timeout_is_read(served, path):
    listener = await served(body_timeout=seconds(6.0))  # the message takes about 1.8 s (more under load)
    async with websockets.connect(f"ws://127.0.0.1:{listener.port}{path}") as ws:

        async def slowly():
            yield '{"type": "cancel", "pad": "' + "x" * 100_000
            for _ in range(3):  # past the watch's 1 s check, well within the body timeout
                await asyncio.sleep(0.6)
                yield "x"
            yield '"}'

        await ws.send(slowly())
        answer = json.loads(await asyncio.wait_for(ws.recv(), seconds(10)))
        assert answer.get("event", answer.get("type")) == "error"  # read and answered, not dropped
        assert listener.guard.open
