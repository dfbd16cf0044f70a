"""A peer's flood of small messages or pings on a WebSocket (`/ws`, the speech stream): its handler gives the
loop a turn every 16 messages or pings (`MESSAGES_A_TURN`), never holding it until all of them are answered."""

from __future__ import annotations

import asyncio
import socket

import pytest

from npu_worker.http_compat.metrics import METRICS_KEY
from npu_worker.ws_server.message_deadline import MESSAGES_A_TURN
from tests.test_ws_unread import HANDSHAKE, masked_frame
from tests.timing import seconds
from tests.tone_engine import ToneEngine

MESSAGES = 300  # their answers (~45 KB) fit the socket's buffers: the handler never waits on the peer
PING = b"p"  # each pong on the wire: 2 bytes of header and this
PINGS = 3000  # their pongs (9 KB) fit the socket's buffers


def answered(registry) -> float:  # noqa: ANN001
    """`error` events the worker has sent (each message here is one refused)."""
    return sum(
        sample.value
        for metric in registry.collect()
        if metric.name == "npu_worker_errors"
        for sample in metric.samples
        if sample.name == "npu_worker_errors_total"
    )


async def opened(loop: asyncio.AbstractEventLoop, peer: socket.socket, port: int, request: bytes) -> None:
    """A socket opened by `request` on the raw non-blocking `peer`, read up to the answer's head only."""
    await loop.sock_connect(peer, ("127.0.0.1", port))
    await loop.sock_sendall(peer, request)
    head = b""
    while b"\r\n\r\n" not in head:
        head += await loop.sock_recv(peer, 1)
    assert head.startswith(b"HTTP/1.1 101 "), head


async def test_a_peer_s_write_of_many_small_messages_does_not_hold_the_loop_until_all_are_answered(served):
    """aiohttp hands a queued message over without a wait and an answer the kernel takes at once is none
    either: a peer that wrote 37 000 1-byte messages at once (and read the answers) held the worker's
    loop until the last was answered, every other connection waiting (/health for 7.4 s). This test's
    own task is such other work: before, its first look found all 300 answered."""
    listener = await served(ToneEngine())
    registry = listener.runner.app[METRICS_KEY].registry
    loop = asyncio.get_running_loop()
    peer = socket.socket()
    peer.setblocking(False)
    try:
        await opened(loop, peer, listener.port, HANDSHAKE)
        await loop.sock_sendall(peer, masked_frame(0x1, b"x") * MESSAGES)  # one write, all at once
        async with asyncio.timeout(seconds(10)):
            while not answered(registry):
                await asyncio.sleep(0)  # (a turn at a time: what the loop's other work gets)
        first_look = answered(registry)
        async with asyncio.timeout(seconds(10)):
            while answered(registry) < MESSAGES:  # every one is still answered
                await asyncio.sleep(0.01)
        assert first_look < MESSAGES / 2, first_look
    finally:
        peer.close()


def handshake(path: str) -> bytes:
    return HANDSHAKE.replace(b"GET /ws ", b"GET " + path.encode() + b" ", 1)


def pongs_in(peer: socket.socket) -> int:
    """The pongs the kernel holds for `peer` now (peeked without a turn of the loop: none taken)."""
    try:
        waiting = peer.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return 0
    return len(waiting) // (2 + len(PING))


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
async def test_a_peer_s_write_of_many_pings_does_not_hold_the_loop_until_all_are_answered(served, path):
    """A ping is read and its pong written without a wait too, and pings did not count toward the turn:
    one write of 37 000 pings held /health 850 ms. This test's own task is the loop's other work: before,
    its first look at the peer's socket found 2 201 to 3 000 of the 3 000 pongs there."""
    listener = await served(ToneEngine())
    loop = asyncio.get_running_loop()
    peer = socket.socket()
    peer.setblocking(False)
    try:
        await opened(loop, peer, listener.port, handshake(path))
        await loop.sock_sendall(peer, masked_frame(0x9, PING) * PINGS)  # one write, all at once
        async with asyncio.timeout(seconds(10)):
            while not pongs_in(peer):
                await asyncio.sleep(0)  # (a turn at a time: what the loop's other work gets)
        first_look = pongs_in(peer)
        async with asyncio.timeout(seconds(10)):
            while pongs_in(peer) < PINGS:  # every one is still answered
                await asyncio.sleep(0.01)
        assert first_look <= 2 * MESSAGES_A_TURN, first_look  # (a turn's pongs, and a margin)
    finally:
        peer.close()
