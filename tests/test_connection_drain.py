"""Writers of one connection waiting for it to drain (`connection_guard.GuardedHandler._drain_helper`),
on a real socket served by `server.listen`."""

from __future__ import annotations

import asyncio
import gc
import socket
import struct

from aiohttp import web

from npu_worker.server import listen
from tests.timing import seconds


async def test_a_connection_reset_after_its_writer_gave_up_logs_no_unretrieved_error(settings):
    """The shielded drain waiter outlives a writer that gives up on a send (a WebSocket frame past its
    deadline, a close bounded to 1 s). A peer that then reset the connection set its exception with
    nobody left to read it: asyncio logged "Future exception was never retrieved" at ERROR, a traceback
    of a connection lost that nothing had gone wrong with."""
    loop = asyncio.get_running_loop()
    reported: list[str] = []
    default_handler = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(str(context.get("message"))))
    gave_up, reset = asyncio.Event(), asyncio.Event()

    async def untaken(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        try:
            async with asyncio.timeout(seconds(0.5)):
                while True:  # until the peer's buffers and the transport's are full
                    await response.write(b"x" * 65536)
        except TimeoutError:
            gave_up.set()
        await reset.wait()  # (the connection stays open: its handler goes on)
        return response

    app = web.Application()
    app.router.add_get("/untaken", untaken)
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    try:
        with socket.socket() as peer:
            peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            peer.setblocking(False)
            await loop.sock_connect(peer, ("127.0.0.1", listener.port))
            await loop.sock_sendall(peer, b"GET /untaken HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            async with asyncio.timeout(seconds(10)):
                await gave_up.wait()
            peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        async with asyncio.timeout(seconds(10)):  # (closed with unread data and no linger: a reset)
            while listener.guard.open:
                await asyncio.sleep(0.01)
        gc.collect()  # (the waiter's report comes when it is collected)
        await asyncio.sleep(0)
    finally:
        reset.set()
        loop.set_exception_handler(default_handler)
        await listener.close()
    assert "Future exception was never retrieved" not in reported, reported
