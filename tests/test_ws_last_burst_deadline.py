"""GET /ws: a request's last burst written in the hand-off's drain (`WsSession.write_now`) that fills a
peer's buffers is still waited on under the send deadline, though the pump then ends with nothing left to
send: a peer that never reads but keeps sending (so the heartbeat never finds it) loses its connection."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_support import ChunkGate, batch
from tests.test_ws_unread import masked_frame, open_small_ws
from tests.timing import until
from tests.tone_engine import ToneEngine


async def test_a_last_burst_that_fills_the_peer_is_waited_on_under_the_send_deadline(served):
    """The first 0.6 s of audio goes out alone (the buffers take it, ≈ 22 KB of it left in asyncio's);
    the rest (1.2 s, 58 KB: under a burst's 64 KiB, and with what is left past asyncio's 64 KiB
    high-water mark), `ok` and `done` are handed over while the loop is held, so one drain brings them
    all and the waiting pump writes them as one direct burst that pauses the transport and ends the
    request. Nothing waited on that write (found by review, d918345): the connection of a peer that
    keeps sending stayed open for ever, holding the unsent bytes."""
    engine = ToneEngine(chunk_seconds=0.6)
    engine.gate = gate = ChunkGate()
    listener = await served(engine, heartbeat_interval=1.0)  # the send deadline: 1.5 × 1 s
    scheduler = listener.runner.app[SCHEDULER_KEY]
    loop = asyncio.get_running_loop()
    pongs: asyncio.Task[None] | None = None
    peer = socket.socket()
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    peer.setblocking(False)
    try:
        handler = await open_small_ws(loop, peer, listener)
        pongs = asyncio.create_task(keep_sending(peer))  # (from the start: it answers no ping)
        gate.allow(1)
        await loop.sock_sendall(peer, masked_frame(0x1, json.dumps(batch("a" * 90)).encode()))  # 1.8 s
        await until(lambda: gate.passed == 1 and scheduler.jobs_running() == 1, "the first chunk")
        await asyncio.sleep(0.2)  # (its direct write: the pump waits on its subscription again)
        assert not handler.transport.is_closing()
        gate.open()
        time.sleep(0.3)  # the loop held: the rest, `ok` and `done` come in the same drain
        await until(lambda: scheduler.jobs_running() == 0, "the request to end")
        await until(lambda: not listener.guard.open, "the connection of a peer that takes nothing to end")
        await pongs
    finally:
        gate.open()
        if pongs is not None:
            pongs.cancel()
        peer.close()


async def keep_sending(peer: socket.socket) -> None:
    """An unasked pong every 50 ms until the server cuts the connection: data from the peer puts the
    server's ping off, so the heartbeat never finds a peer that sends but never reads."""
    loop = asyncio.get_running_loop()
    with contextlib.suppress(OSError):
        while True:
            await loop.sock_sendall(peer, masked_frame(0xA, b""))
            await asyncio.sleep(0.05)
