"""A speech stream whose peer is gone while its message is handled: the answer's write met a closing
transport (`ClientConnectionResetError`), which was logged as an internal error with an incident id
(an ERROR and a traceback for a client that hung up, as at every shutdown where a client still sent).
A connection lost is the peer's doing (or the drop's): the session ends quietly."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

from tests.test_ws_unread import masked_frame
from tests.timing import seconds

HANDSHAKE = (
    b"GET /v1/audio/speech/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
CONFIG = b'{"type": "session.config", "voice": "default", "model": "tts-1"}'


async def test_a_peer_that_never_reads_is_dropped_without_an_internal_error(served, caplog):
    """It sends `session.config` after `session.config` and reads none of the answers: once it took
    nothing for the send grace it is dropped (as designed), and the message then being answered
    ended in an `InternalError` incident, logged at ERROR with a traceback."""
    listener = await served(heartbeat_interval=0.2)  # (the send grace: 1.5 heartbeats)
    caplog.set_level(logging.INFO)
    loop = asyncio.get_running_loop()
    with socket.socket() as peer:
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        peer.setblocking(False)
        await loop.sock_connect(peer, ("127.0.0.1", listener.port))
        await loop.sock_sendall(peer, HANDSHAKE)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += await loop.sock_recv(peer, 1)  # (byte by byte: nothing past the answer's head)
        assert answer.startswith(b"HTTP/1.1 101 "), answer
        (handler,) = listener.guard.open
        handler.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        with contextlib.suppress(ConnectionError):
            async with asyncio.timeout(seconds(20)):
                while listener.guard.open:  # (sent until the worker drops it)
                    await loop.sock_sendall(peer, masked_frame(0x1, CONFIG) * 20)
    async with asyncio.timeout(seconds(10)):
        while listener.guard.open:
            await asyncio.sleep(0.02)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
