"""A lingering close (npu_worker/lingering_close.py) seen from outside: its total bound counts from the
answer, aiohttp's drain of a kept-alive 401's body included (it was that drain, then the whole bound
again), and `/metrics` counts the connections lingering now (none said how many did)."""

from __future__ import annotations

import asyncio

from npu_worker import lingering_close, server
from tests.body_support import KIB, answer_of
from tests.timing import seconds, until

DRAIN = seconds(4)  # aiohttp's drain of a kept-alive answer's unread body (1 s in production)
TOTAL = seconds(5)  # the linger's bound (5 s in production)


def post(declared: int) -> bytes:
    return (
        b"POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % declared
    )


async def keep_sending(writer: asyncio.StreamWriter) -> None:
    """A caller that goes on sending its body after the answer, until the worker ends the connection."""
    try:
        while True:
            writer.write(b" " * (16 * KIB))
            await writer.drain()
    except (ConnectionError, OSError):
        pass


async def lingering_gauge(port: int) -> float:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    async with asyncio.timeout(seconds(10)):
        answer = await reader.read()
    writer.close()
    lines = [line for line in answer.split(b"\n") if line.startswith(b"npu_worker_connections_lingering ")]
    assert len(lines) == 1, answer[-2000:]
    return float(lines[0].split()[1])


async def test_a_kept_alive_401_is_cut_at_the_bound_from_its_answer(served, monkeypatch):
    """A 401 kept alive whose body keeps arriving: aiohttp drains it for DRAIN, then it lingers; the
    caller is cut TOTAL after its answer. Before: DRAIN + TOTAL after it (6 s in production)."""
    monkeypatch.setattr(server, "LINGER_SECONDS", DRAIN)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", TOTAL)
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    listener = await served(token="s3cret")
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    asked = loop.time()  # (the answer comes at once; `answer_of` reads on to the FIN, after the drain)
    writer.write(post(64 * 1024 * 1024 * KIB) + b" " * (64 * KIB))
    sending = asyncio.create_task(keep_sending(writer))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 401 "), status
        async with asyncio.timeout(DRAIN + TOTAL + seconds(10)):
            await sending  # the worker ends the connection: the caller's writes fail
        assert loop.time() - asked < DRAIN + TOTAL - seconds(1.5)
    finally:
        sending.cancel()
        writer.transport.abort()


async def test_metrics_count_the_connections_lingering_now(served, monkeypatch):
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB)
    assert await lingering_gauge(listener.port) == 0
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * KIB) + b" " * (128 * KIB))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 "), status
        assert await lingering_gauge(listener.port) == 1
    finally:
        writer.transport.abort()
    await until(lambda: not listener.guard.lingering, "the lingering connection to end")
    assert await lingering_gauge(listener.port) == 0
