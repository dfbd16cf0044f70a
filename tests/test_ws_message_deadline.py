"""A WebSocket message must finish arriving within --body-timeout (ws_server/message_deadline.py)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import websockets

from npu_worker.app_keys import BODY_BUDGET_KEY
from tests.timing import seconds, until

PATHS = ["/ws", "/v1/audio/speech/stream"]


async def fragments_then_a_trickle(first: int, every: float):
    """A text message that starts with `first` characters and then never ends (one more every `every`)."""
    yield "x" * first
    while True:
        await asyncio.sleep(every)
        yield "x"


@pytest.mark.parametrize("path", PATHS)
async def test_a_message_that_never_finishes_loses_its_connection(served, path):
    """aiohttp kept the unfinished message (up to --max-body-bytes) for as long as its peer trickled it:
    20 such sockets held 173 MiB, with no bound in time."""
    listener = await served(body_timeout=0.5)
    ws = await websockets.connect(f"ws://127.0.0.1:{listener.port}{path}", max_size=None)
    sending = asyncio.create_task(ws.send(fragments_then_a_trickle(100_000, 0.2)))
    try:
        await until(lambda: not listener.guard.open, "the connection to be dropped")
    finally:
        sending.cancel()
        ws.transport.abort()


@pytest.mark.parametrize("path", PATHS)
async def test_a_slow_message_that_finishes_within_the_body_timeout_is_read(served, path):
    listener = await served(body_timeout=seconds(6.0))  # the message takes about 1.8 s (more under load)
    async with websockets.connect(f"ws://127.0.0.1:{listener.port}{path}") as ws:

        async def slowly():
            yield '{"type": "cancel", "pad": "' + "x" * 100_000
            for _ in range(3):  # past the watch's 1 s check, well within the body timeout
                await asyncio.sleep(0.6)
                yield "x"
            yield '"}'

        await ws.send(slowly())
        answer = json.loads(await asyncio.wait_for(ws.recv(), seconds(10)))
        assert answer.get("event", answer.get("type")) == "error"  # read and answered, not dropped
        assert listener.guard.open


def masked_ping(payload: bytes) -> bytes:
    """A client ping frame (RFC 6455 §5.5.2: masked, the mask zeros)."""
    return bytes([0x89, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


@pytest.mark.parametrize("path", PATHS)
async def test_pings_hold_nothing_of_the_body_budget(served, path):
    """Every byte a socket received since its last whole message counted as an unfinished message's:
    4 MiB of pings, no message at all, took a 2 MiB body budget whole (other callers' bodies were
    dropped or refused 503 meanwhile), and the socket was closed with 1013."""
    mib = 1024 * 1024
    listener = await served(max_body_bytes=mib, voice_max_bytes=mib, body_budget_bytes=2 * mib)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    loop = asyncio.get_running_loop()
    with socket.socket() as sock:
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", listener.port))
        await loop.sock_sendall(
            sock,
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode(),
        )
        received = bytearray()

        async def read_pongs() -> None:
            while chunk := await loop.sock_recv(sock, 1 << 20):
                received.extend(chunk)
                del received[: max(0, len(received) - 256)]  # the tail is enough

        reading = asyncio.create_task(read_pongs())
        peak = 0
        try:
            for _ in range(32):  # 128 KiB of pings at a time, 4 MiB in all
                await loop.sock_sendall(sock, masked_ping(b"p" * 125) * 1000)
                peak = max(peak, budget.held)
            await loop.sock_sendall(sock, masked_ping(b"last"))
            await until(lambda: received.endswith(b"\x8a\x04last"), "the last ping's pong: every ping read")
        finally:
            reading.cancel()
    assert budget.refused == 0 and peak < mib, (budget.refused, peak)
