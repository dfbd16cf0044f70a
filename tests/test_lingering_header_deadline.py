"""A lingering close (npu_worker/lingering_close.py) under a `--header-timeout` shorter than its own bounds:
the connection waits in the guard's table as one waiting for headers (counted, evicted first), but it is
ended by the linger's bounds, not by the header deadline, which cut it (a reset, while its caller may
still send) and counted it in `/metrics` as a `header_timeout`, a slow-loris sign it was not."""

from __future__ import annotations

import asyncio

from npu_worker import lingering_close
from tests.body_support import KIB, answer_of
from tests.test_lingering_close import post
from tests.timing import seconds, until

HEADER_TIMEOUT = 0.2  # (the least --header-timeout takes is 0.1 s)


async def test_a_short_header_deadline_neither_cuts_a_lingering_close_nor_counts_it(served, monkeypatch):
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 3 * HEADER_TIMEOUT)  # (its bound here)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB, header_timeout=HEADER_TIMEOUT)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * KIB) + b" " * (128 * KIB))  # refused by its length: 413, the body unread
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        async with asyncio.timeout(seconds(10)):
            assert await reader.read() == b""  # the worker's FIN after the answer (no reset)
        await until(lambda: not listener.guard.open, "the lingering connection to end after its silence")
        assert listener.guard.timed_out == 0  # (before: 1, the header deadline's cut at 0.2 s)
    finally:
        writer.transport.abort()
