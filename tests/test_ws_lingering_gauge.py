"""A WebSocket the worker refused or failed (here: a frame over `--max-body-bytes`, 1009) lingers on a
duplicate of its socket after its close frame (`ws_server/opening.ClosingSockets`), as a refused HTTP
answer's connection lingers; `/metrics` counted the HTTP ones alone in `npu_worker_connections_lingering`
(and in `npu_worker_connections_open`), so these closing sockets were in no gauge."""

from __future__ import annotations

import asyncio
import json
import socket
import struct

import websockets

from npu_worker import app_keys
from npu_worker.ws_server import opening
from tests.test_ws_close_reasons import upgraded
from tests.test_ws_support import batch
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

KIB = 1024


async def gauges(port: int) -> dict[str, float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    async with asyncio.timeout(seconds(10)):
        answer = await reader.read()
    writer.close()
    names = (b"npu_worker_connections_lingering ", b"npu_worker_connections_open ")
    lines = [line.split() for line in answer.split(b"\n") if line.startswith(names)]
    return {name.decode(): float(value) for name, value in lines}


async def test_failed_sockets_lingering_are_counted_in_the_gauges(served, monkeypatch):
    monkeypatch.setattr(opening, "REFUSAL_CLOSE_SECONDS", 600.0)  # they linger while the test looks
    listener = await served(max_body_bytes=1024 * KIB)
    closing = listener.runner.app[app_keys.CLOSING_SOCKETS_KEY]
    peers = [await upgraded(listener.port) for _ in range(2)]
    try:
        for _, writer in peers:  # a frame over the limit, announced and never sent
            writer.write(bytes([0x81, 0x80 | 127]) + struct.pack("!Q", 4096 * KIB) + b"\0" * 4)
        await until(lambda: closing.lingering == 2, "the failed sockets to linger")
        counted = await gauges(listener.port)
        # (the scrape's own connection is open as it is answered: it is counted in open, not lingering)
        assert counted == {"npu_worker_connections_lingering": 2.0, "npu_worker_connections_open": 3.0}, (
            counted
        )
    finally:
        for _, writer in peers:
            writer.transport.abort()
    await until(lambda: closing.lingering == 0, "the lingering sockets to end with their peers")
    assert (await gauges(listener.port))["npu_worker_connections_lingering"] == 0.0


async def test_a_socket_dropped_while_its_close_frame_waits_is_counted_once(served, monkeypatch):
    """A peer that reads nothing is dropped at the send deadline (`drop_untaken`): its close frame waits
    behind the audio it left unread and its connection is still the guard's open one, so the gauges
    counted it twice in `npu_worker_connections_open` (the guard's and its duplicate's) and as
    lingering before its close frame had gone."""
    monkeypatch.setattr(opening, "REFUSAL_CLOSE_SECONDS", 600.0)  # its close frame waits while the test looks
    monkeypatch.setattr(opening, "UNREAD_GRACE_SECONDS", 600.0)  # (nor is it cut as a handler that ended)
    engine = ToneEngine(chunk_seconds=1.0, delay_per_chunk=0.005)  # the buffers fill before 30 s unread
    listener = await served(engine, heartbeat_interval=0.2)
    scheduler = listener.runner.app[app_keys.SCHEDULER_KEY]
    small = socket.socket()
    small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    small.setblocking(False)
    await asyncio.get_running_loop().sock_connect(small, ("127.0.0.1", listener.port))
    ws = await websockets.connect(  # its pings put the heartbeat's off: the send deadline drops it
        f"ws://127.0.0.1:{listener.port}/ws", sock=small, max_queue=1, ping_interval=0.05, ping_timeout=None
    )
    try:
        await ws.send(json.dumps(batch(*["가" * 2000] * 10)))
        await until(lambda: scheduler.jobs_running() == 1, "the request to start")
        await until(lambda: scheduler.jobs_running() == 0, "the send deadline to end the request")
        assert len(listener.guard.open) == 1  # its close frame still unsent: the connection is open
        counted = await gauges(listener.port)
        assert counted == {"npu_worker_connections_lingering": 0.0, "npu_worker_connections_open": 2.0}, (
            counted
        )
    finally:
        ws.transport.abort()
    await until(lambda: not listener.guard.open, "the connection to end with its peer")
