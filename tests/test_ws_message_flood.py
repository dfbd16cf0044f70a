"""A peer's flood of small messages on a WebSocket (`/ws`, the speech stream): its handler gives the loop a
turn every 16 messages (`MESSAGES_A_TURN`), never holding it until all of them are answered."""

from __future__ import annotations

import asyncio
import socket

from npu_worker.http_compat.metrics import METRICS_KEY
from tests.test_ws_unread import HANDSHAKE, masked_frame
from tests.timing import seconds
from tests.tone_engine import ToneEngine

MESSAGES = 300  # their answers (~45 KB) fit the socket's buffers: the handler never waits on the peer


def answered(registry) -> float:  # noqa: ANN001
    """`error` events the worker has sent (each message here is one refused)."""
    return sum(
        sample.value
        for metric in registry.collect()
        if metric.name == "npu_worker_errors"
        for sample in metric.samples
        if sample.name == "npu_worker_errors_total"
    )


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
        await loop.sock_connect(peer, ("127.0.0.1", listener.port))
        await loop.sock_sendall(peer, HANDSHAKE)
        head = b""
        while b"\r\n\r\n" not in head:
            head += await loop.sock_recv(peer, 1)
        assert head.startswith(b"HTTP/1.1 101 "), head
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
