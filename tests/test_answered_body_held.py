"""The body of an answered request once the connection serves its next one (`connection_guard`'s
`answer_written` keeps it for `connection_lost` only while that answer's linger may run)."""

from __future__ import annotations

import asyncio
import gc
import re
import sys
from typing import Any

from aiohttp.streams import StreamReader

from npu_worker.server import Listener
from tests.timing import seconds

WS_UPGRADE = (
    "GET /ws?token=s3cret HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def bodies_made(listener: Listener) -> list[StreamReader]:
    """The bodies of the requests the listener's server makes from now on, as aiohttp makes each."""
    made: list[StreamReader] = []
    server = listener.runner.server
    assert server is not None
    factory = server.request_factory

    def make_request(*args: Any) -> Any:
        made.append(args[1])
        return factory(*args)

    server.request_factory = make_request
    return made


async def answer_head(reader: asyncio.StreamReader) -> bytes:
    async with asyncio.timeout(seconds(10)):
        return await reader.readuntil(b"\r\n\r\n")


async def test_a_body_answered_unread_is_not_held_while_the_next_request_runs(served):
    """A 401 for a body that came whole: nothing reads it, its bytes stay in its reader. The connection
    kept that reader (for a reset during the answer's linger) until its next answer: a WebSocket opened
    next held it for hours, a connection each."""
    listener = await served(token="s3cret")
    bodies = bodies_made(listener)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        body = b"x" * 60_000
        writer.write(
            b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        head = await answer_head(reader)
        assert head.startswith(b"HTTP/1.1 401")
        length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        assert length is not None
        await reader.readexactly(int(length.group(1)))
        writer.write(WS_UPGRADE.encode())
        assert (await answer_head(reader)).startswith(b"HTTP/1.1 101")  # the next request runs
        answered = bodies.pop(0)
        # (a count, not a scan of the heap, which takes seconds in the suite's worker; the holders named
        # where there are any)
        alone = object()  # (held by its name alone: the count's base, whatever the interpreter counts)
        held = sys.getrefcount(answered) - sys.getrefcount(alone)
        assert held == 0, f"held by {[type(holder).__name__ for holder in gc.get_referrers(answered)]}"
    finally:
        writer.close()
