"""A WebSocket the worker refused or failed (here: a frame over `--max-body-bytes`, 1009) lingers on a
duplicate of its socket after its close frame (`ws_server/opening.ClosingSockets`), as a refused HTTP
answer's connection lingers; `/metrics` counted the HTTP ones alone in `npu_worker_connections_lingering`
(and in `npu_worker_connections_open`), so these closing sockets were in no gauge."""

from __future__ import annotations

import asyncio
import struct

from npu_worker import app_keys
from npu_worker.ws_server import opening
from tests.test_ws_close_reasons import upgraded
from tests.timing import seconds, until

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
