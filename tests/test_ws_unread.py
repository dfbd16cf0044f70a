"""GET /ws and a peer that reads nothing: its connection is dropped, not kept for as long as it stays."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_support import batch
from tests.timing import until
from tests.tone_engine import ToneEngine


@pytest.mark.parametrize(
    ("pings_every", "heartbeat"),
    [(None, 0.5), (0.05, 0.2)],  # silent: its ping goes out once the socket's buffers are full
    ids=["silent", "pinging"],
)
async def test_a_peer_that_reads_nothing_loses_its_connection_and_its_request(served, pings_every, heartbeat):
    """Silent, the heartbeat found it and closed the socket, but asyncio's close waited for the unsent
    audio to go out, so the connection stayed open; pinging (any data it sends puts the server's ping
    off), it was never found at all, and its pump waited on it for ever."""
    # 1 s of audio per 5 ms: the socket's buffers fill (and the pump waits on them) before 30 s of audio
    # piles up unread in the subscription, which would end the request as a slow consumer's
    engine = ToneEngine(chunk_seconds=1.0, delay_per_chunk=0.005)
    listener = await served(engine, heartbeat_interval=heartbeat)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    small = socket.socket()
    small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # full after a few frames
    small.setblocking(False)
    await asyncio.get_running_loop().sock_connect(small, ("127.0.0.1", listener.port))
    ws = await websockets.connect(
        f"ws://127.0.0.1:{listener.port}/ws",
        sock=small,
        max_queue=1,  # the library stops reading the socket at once: nothing is ever received
        ping_interval=pings_every,
        ping_timeout=None,
    )
    try:
        await ws.send(json.dumps(batch(*["가" * 2000] * 10)))  # 400 s of audio: far past every buffer
        await until(lambda: scheduler.jobs_running() == 1, "the request to start")
        await until(lambda: not listener.guard.open, "the connection to be dropped")
        await until(lambda: scheduler.jobs_running() == 0, "the request to end")
        assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("ws-job-")]
    finally:
        ws.transport.abort()
