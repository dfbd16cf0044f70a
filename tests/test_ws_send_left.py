"""A `/ws` send `opening.taken` leaves when its own wait is cancelled (the session's drain deadline at
shutdown) after the send itself failed in that same turn: the send's error is read, not left to be
logged by asyncio as "exception was never retrieved" with two tracebacks after "npu-worker stopped"
(seen with a reader that stopped reading and then closed its socket during the drain)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from npu_worker.ws_server.opening import taken


async def _a_real_tcp_transport() -> tuple[Any, asyncio.AbstractServer, list[asyncio.StreamWriter]]:
    """A connected client transport; the server's and the client's writers, both to close (the server's
    end left open was an unclosed transport that a later test's collection reported)."""
    accepted: asyncio.Future[asyncio.StreamWriter] = asyncio.get_running_loop().create_future()
    server = await asyncio.start_server(lambda _r, w: accepted.set_result(w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return writer.transport, server, [writer, await accepted]


async def test_a_send_that_failed_as_its_wait_was_cancelled_has_its_error_read() -> None:
    loop = asyncio.get_running_loop()
    gc.collect()  # what earlier tests left for the GC is reported now, not below as this test's
    unretrieved: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    transport, server, writers = await _a_real_tcp_transport()
    try:
        send = loop.create_future()
        waiting = asyncio.create_task(taken(send, 30.0, lambda: None, transport))
        await asyncio.sleep(0.05)  # `taken` waits on the send, its ack watch started
        lost = ConnectionError("Connection lost")
        send.set_exception(lost)
        waiting.cancel()  # the same turn: the drain's deadline ends the wait
        with pytest.raises(asyncio.CancelledError):
            await waiting
        del send, waiting
        gc.collect()
        await asyncio.sleep(0)
        assert not [c for c in unretrieved if c.get("exception") is lost], unretrieved
    finally:
        loop.set_exception_handler(None)
        for writer in writers:
            writer.close()
            await writer.wait_closed()
        server.close()
        await server.wait_closed()
