"""GET /ws and a peer that reads nothing: its connection is dropped, not kept for as long as it stays."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket

import pytest
import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.ws_server import opening
from tests.test_ws_support import batch
from tests.timing import seconds, until
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


async def test_a_peer_that_reads_again_after_the_send_deadline_hears_why_it_was_closed(served, monkeypatch):
    """The send deadline cut the connection at once: a peer whose receive window was still open (a
    slow link, a tab busy for a moment) got a bare 1006, a refusal it could not tell from a network
    fault. The close frame now goes out behind what was sent, and the connection waits a bounded time."""
    monkeypatch.setattr(opening, "REFUSAL_CLOSE_SECONDS", 5.0)  # the reader below takes what piled up
    engine = ToneEngine(chunk_seconds=1.0, delay_per_chunk=0.005)
    listener = await served(engine, heartbeat_interval=0.2)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    small = socket.socket()
    small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    small.setblocking(False)
    await asyncio.get_running_loop().sock_connect(small, ("127.0.0.1", listener.port))
    ws = await websockets.connect(
        f"ws://127.0.0.1:{listener.port}/ws",
        sock=small,
        max_queue=1,
        ping_interval=0.05,
        ping_timeout=None,
        close_timeout=0.1,  # it ends the connection once the close handshake is done
    )
    try:
        await ws.send(json.dumps(batch(*["가" * 2000] * 10)))
        await until(lambda: scheduler.jobs_running() == 1, "the request to start")
        await until(lambda: scheduler.jobs_running() == 0, "the send deadline to end the request")
        with pytest.raises(websockets.ConnectionClosed):  # now it reads everything
            while True:
                await ws.recv()
        assert ws.close_code == 1008 and "took nothing" in (ws.close_reason or ""), ws.close_code
        await until(lambda: not listener.guard.open, "the connection to end")
    finally:
        ws.transport.abort()


HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def open_small_ws(loop, peer: socket.socket, listener):  # noqa: ANN001, ANN201
    """`/ws` opened on the raw non-blocking `peer`, read up to the answer's head only (byte by byte);
    the server's end of it with a 4 KiB send buffer: its handler, from the connection guard."""
    await loop.sock_connect(peer, ("127.0.0.1", listener.port))
    await loop.sock_sendall(peer, HANDSHAKE)
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += await loop.sock_recv(peer, 1)  # (byte by byte: nothing past the answer's head)
    assert answer.startswith(b"HTTP/1.1 101 ")
    (handler,) = listener.guard.open
    handler.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return handler


def masked_frame(opcode: int, payload: bytes) -> bytes:
    """A client frame (RFC 6455 §5.2: masked; the mask is zeros, so the payload goes as it is)."""
    size = len(payload)
    length = bytes([0x80 | size]) if size < 126 else bytes([0x80 | 127]) + size.to_bytes(8, "big")
    return bytes([0x80 | opcode]) + length + b"\0\0\0\0" + payload


def frame_opcodes(stream: bytes) -> list[int]:
    """The opcodes of the server's (unmasked) frames in `stream`, up to the last whole one."""
    opcodes, at = [], 0
    while at + 2 <= len(stream):
        size, head = stream[at + 1] & 0x7F, 2
        if size == 126:
            size, head = int.from_bytes(stream[at + 2 : at + 4], "big"), 4
        elif size == 127:
            size, head = int.from_bytes(stream[at + 2 : at + 10], "big"), 10
        if at + head + size > len(stream):
            break
        opcodes.append(stream[at] & 0x0F)
        at += head + size
    return opcodes


async def test_a_peer_still_reading_when_its_socket_ends_gets_the_rest_and_the_close_frame(
    served, monkeypatch
):
    """The handler has ended (the peer sent its close) with audio still unsent: a peer that took nothing
    of it within a grace was cut, and so was one that was reading it, if slowly, its close frame unsent
    (a bare 1006). One that takes some in each grace now gets the rest and the close frame."""
    monkeypatch.setattr(opening, "UNREAD_GRACE_SECONDS", 0.3)
    engine = ToneEngine(chunk_seconds=1.0, delay_per_chunk=0.005)
    listener = await served(engine, heartbeat_interval=10.0)
    loop = asyncio.get_running_loop()
    small = socket.socket()
    small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # read from the socket itself, no buffer
    small.setblocking(False)
    try:
        handler = await open_small_ws(loop, small, listener)
        await loop.sock_sendall(small, masked_frame(0x1, json.dumps(batch(*["가" * 2000] * 10)).encode()))
        await until(lambda: handler.transport.get_write_buffer_size() > 0, "the audio to pile up")
        await loop.sock_sendall(
            small, masked_frame(0x8, (1000).to_bytes(2, "big"))
        )  # its close: the handler ends
        received = b""
        while chunk := await loop.sock_recv(small, 4096):  # ~80 KB/s: some in each grace, the whole in more
            received += chunk
            await asyncio.sleep(0.05)
        assert frame_opcodes(received)[-1] == 0x8, frame_opcodes(received)[-3:]
    finally:
        small.close()


async def test_a_peer_that_sends_one_byte_messages_and_reads_nothing_is_dropped_as_the_peer(served, caplog):
    """1-byte messages for ever, their `error` answers never read: the send deadline drops the peer
    (bounded), but its `ConnectionResetError` came out of the handler's refusal and was logged as the
    worker's own failure, "internal error on GET /ws (incident …)" with a traceback, for each such peer.
    (The sender yields to the loop after each message, and the server's send buffer is small: it took
    42.8 s alone and over 60 s under load, the sender filling megabytes of kernel buffers unyielding.)"""
    caplog.set_level(logging.INFO)
    listener = await served(ToneEngine(), heartbeat_interval=0.2)
    small = socket.socket()
    small.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # full after a few answers
    small.setblocking(False)
    await asyncio.get_running_loop().sock_connect(small, ("127.0.0.1", listener.port))
    ws = await websockets.connect(
        f"ws://127.0.0.1:{listener.port}/ws", sock=small, max_queue=1, ping_interval=None, ping_timeout=None
    )
    (handler,) = listener.guard.open  # its answers fill a 4 KiB send buffer, not one autotuned to MiBs
    handler.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    try:
        async with asyncio.timeout(seconds(60)):
            with contextlib.suppress(websockets.ConnectionClosed):
                while True:  # each an `UnknownMessage`/`BadRequest` answer the peer never reads
                    await ws.send("x")
                    # (a send the kernel takes at once never yields: the loop was the sender's until
                    # the server's receive buffer, autotuned up to tcp_rmem's max, was full; 2 M sends)
                    await asyncio.sleep(0)
        await until(lambda: not listener.guard.open, "the connection to be dropped")
    finally:
        ws.transport.abort()
    failures = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not failures, failures
