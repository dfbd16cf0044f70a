"""A WebSocket message must finish arriving within --body-timeout (ws_server/message_deadline.py)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
import websockets

from npu_worker.app_keys import BODY_BUDGET_KEY
from npu_worker.ws_server import message_deadline, opening
from npu_worker.ws_server.message_deadline import UNFINISHED_ALLOWANCE, UNFINISHED_REASON
from tests.timing import seconds, until

PATHS = ["/ws", "/v1/audio/speech/stream"]
CHECK_SECONDS = 0.05


@pytest.fixture(autouse=True)
def frequent_checks(monkeypatch):
    """The watch looks every 0.05 s, not every 1 s: each drop came 1-2 s after its 0.5 s body timeout
    (the first look past it starts the clock, the next one past the timeout drops), 30 s of the file's
    wall waited out. The same bound is timed; more looks only find an overrun sooner. A refused socket's
    connection lingers 0.3 s at most (1 s in production): `wait_closed` waited for its end."""
    monkeypatch.setattr(message_deadline, "CHECK_SECONDS", CHECK_SECONDS)
    monkeypatch.setattr(opening, "REFUSAL_CLOSE_SECONDS", 0.3)


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
    listener = await served(body_timeout=seconds(6.0))  # the message takes about 0.45 s (more under load)
    async with websockets.connect(f"ws://127.0.0.1:{listener.port}{path}") as ws:

        async def slowly():
            yield '{"type": "cancel", "pad": "' + "x" * 100_000
            for _ in range(3):  # past many of the watch's checks, well within the body timeout
                await asyncio.sleep(0.15)
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
        await upgrade(sock, listener.port, path)
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


async def upgrade(sock: socket.socket, port: int, path: str) -> None:
    """Connect `sock` (made non-blocking) and send a WebSocket handshake for `path`; the answer is
    left unread."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(
        sock,
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode(),
    )


def masked_frame(first_byte: int, payload: bytes) -> bytes:
    """A client frame (masked, the mask zeros): `first_byte` is FIN and the opcode."""
    size = len(payload)
    if size < 126:
        length = bytes([0x80 | size])
    elif size < 65536:
        length = bytes([0x80 | 126]) + size.to_bytes(2, "big")
    else:
        length = bytes([0x80 | 127]) + size.to_bytes(8, "big")
    return bytes([first_byte]) + length + b"\0\0\0\0" + payload


@pytest.mark.parametrize("path", PATHS)
async def test_pings_queued_behind_a_message_are_not_taken_off_twice(served, path):
    """A whole message sets the count's mark at every byte received, the pings queued behind it
    included; reading those pings then took them off again: one write of a message and 52 KiB of
    pings let the next unfinished message grow 52 KiB past the allowance before the body budget held
    any of it or the deadline's clock ran."""
    listener = await served()
    budget = listener.runner.app[BODY_BUDGET_KEY]
    loop = asyncio.get_running_loop()
    with socket.socket() as sock:
        await upgrade(sock, listener.port, path)
        await until(lambda: listener.guard.open and not listener.guard.waiting, "the handshake")
        (handler,) = listener.guard.open
        burst = masked_frame(0x81, b'{"type": "cancel"}') + masked_ping(b"p" * 125) * 400
        unfinished = masked_frame(0x01, b"x" * 100_000)  # a first fragment (no FIN): never finished
        expected = handler.bytes_received + len(burst) + len(unfinished)
        await loop.sock_sendall(sock, burst)
        await until(lambda: handler.bytes_received >= expected - len(unfinished), "the burst")
        await loop.sock_sendall(sock, unfinished)
        await until(lambda: handler.bytes_received >= expected, "the unfinished message's start")
        await until(lambda: budget.held >= 100_000 - UNFINISHED_ALLOWANCE, "the message's bytes held")


async def a_first_fragment_then(trickle: bool):
    """A text message of a few bytes that never ends: nothing more, or a byte every 0.1 s."""
    yield '{"type": "cancel", "pad": "'
    while True:
        await asyncio.sleep(0.1 if trickle else 3600)
        yield "x"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("trickle", [False, True], ids=["stopped", "trickled"])
async def test_a_small_message_that_never_finishes_loses_its_connection(served, path, trickle):
    """Only a message more than 64 KiB of which had arrived was timed: a first fragment of 27 bytes
    that never went on (or went on a byte at a time) kept its socket, and its connection's slot, for
    ever, the heartbeat's pings answered by the peer's library as they came."""
    listener = await served(body_timeout=0.5, heartbeat_interval=0.2)
    ws = await websockets.connect(f"ws://127.0.0.1:{listener.port}{path}")
    sending = asyncio.create_task(ws.send(a_first_fragment_then(trickle)))
    try:
        await until(lambda: not listener.guard.open, "the connection to be dropped")
        await asyncio.wait_for(ws.wait_closed(), seconds(5))
    finally:
        sending.cancel()
        ws.transport.abort()
    assert (ws.close_code, ws.close_reason) == (1008, UNFINISHED_REASON.format(0.5))


@pytest.mark.parametrize("path", PATHS)
async def test_an_idle_socket_that_only_pings_and_pongs_is_kept(served, path):
    """The watch counts every byte in while the handler awaits a message: the heartbeat's pongs and the
    peer's pings are taken off as read, so an idle socket is not taken for an unfinished message."""
    listener = await served(body_timeout=0.5, heartbeat_interval=0.2)
    async with websockets.connect(f"ws://127.0.0.1:{listener.port}{path}", ping_interval=0.1) as ws:
        await asyncio.sleep(1.5)  # three body timeouts (30 of the watch's checks) of pings and pongs
        assert listener.guard.open
        await ws.send('{"type": "cancel"}')
        answer = json.loads(await asyncio.wait_for(ws.recv(), seconds(10)))
        assert answer.get("event", answer.get("type")) == "error"  # read and answered: still served


@pytest.mark.parametrize("path", PATHS)
async def test_a_pong_the_peer_leaves_untaken_does_not_stop_the_watch(served, path):
    """The loop that reads the socket answered each ping and waited until the peer took the pong; while
    it waited, the watch took the socket for busy with a message (only past 64 KiB counted). A peer that
    pinged without reading until a pong waited, then began a small message and trickled it (each byte
    putting the heartbeat's ping off), kept its socket for ever."""
    listener = await served(body_timeout=0.5)
    loop = asyncio.get_running_loop()
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (before connecting: a small window)
        await upgrade(sock, listener.port, path)
        await until(lambda: listener.guard.open and not listener.guard.waiting, "the handshake")
        (handler,) = listener.guard.open
        sent = handler.bytes_received
        for _ in range(1000):  # 512 pings (64 KiB of pongs) at a time, until a pong waits on the peer
            burst = masked_ping(b"p" * 125) * 512
            await loop.sock_sendall(sock, burst)
            sent += len(burst)
            await until(lambda: handler.bytes_received >= sent, "the pings read")  # noqa: B023
            await asyncio.sleep(0.01)  # (the reading loop's turn)
            if handler._drain_waiter is not None:  # the pongs' writer waits for the peer to take some
                break
        else:
            pytest.fail("no pong ever waited on the peer")
        await loop.sock_sendall(sock, masked_frame(0x01, b'{"type": "cancel", "pad": "'))  # never ends
        trickling = asyncio.create_task(trickle_into(sock))
        try:
            await until(lambda: not listener.guard.open, "the connection to be dropped")
        finally:
            trickling.cancel()


async def trickle_into(sock: socket.socket) -> None:
    """A continuation byte of the unfinished message every 0.1 s."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(0.1)
        await loop.sock_sendall(sock, masked_frame(0x00, b"x"))


@pytest.mark.parametrize("path", PATHS)
async def test_a_message_begun_behind_a_whole_one_is_timed(served, path):
    """Taking a whole message set the count's mark at every byte received so far: the start of the next
    message, come in the same write (or while the whole one waited its turn), was taken off with it. A
    first fragment sent right behind a `cancel`, then nothing, kept its socket for ever."""
    listener = await served(body_timeout=0.5)
    loop = asyncio.get_running_loop()
    with socket.socket() as sock:
        await upgrade(sock, listener.port, path)
        await until(lambda: listener.guard.open and not listener.guard.waiting, "the handshake")
        whole = masked_frame(0x81, b'{"type": "cancel"}')
        await loop.sock_sendall(sock, whole + masked_frame(0x01, b'{"type": "cancel", "pad": "'))
        await until(lambda: not listener.guard.open, "the connection to be dropped")


@pytest.mark.parametrize("path", PATHS)
async def test_a_message_begun_with_the_handshake_is_timed(served, path):
    """The count started at every byte received when the socket opened: a first fragment sent in the
    handshake's own write, then nothing, kept its socket for ever."""
    listener = await served(body_timeout=0.5)
    loop = asyncio.get_running_loop()
    with socket.socket() as sock:
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", listener.port))
        handshake = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        await loop.sock_sendall(sock, handshake.encode() + masked_frame(0x01, b'{"type": "cancel", "pad": "'))
        await until(lambda: listener.guard.open, "the connection")
        await until(lambda: not listener.guard.open, "the connection to be dropped")
