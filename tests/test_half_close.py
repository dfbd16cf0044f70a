"""A caller that ends its sending side (a FIN, `shutdown(SHUT_WR)`) once its request is sent, on a real
socket: its whole requests are answered, then the connection closes; a FIN is still a hang-up for a
handler that looks (`/synth`), and a request cut short by it still closes the connection at once."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tests.timing import seconds
from tests.tone_engine import ToneEngine

HOST = b"Host: 127.0.0.1\r\n"


async def half_closed_exchange(port: int, data: bytes) -> bytes:
    """Send `data`, end the sending side, and read the answer up to the worker's close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        writer.write_eof()
        async with asyncio.timeout(seconds(5)):
            return await reader.read()
    finally:
        writer.close()


def statuses(answer: bytes) -> list[bytes]:
    return re.findall(rb"HTTP/1\.[01] (\d{3}) ", answer)  # (a body ends without a line break)


@pytest.mark.parametrize(
    ("sent", "answered"),
    [
        (b"GET /health HTTP/1.1\r\n" + HOST + b"\r\n", [b"200"]),
        (b"GET /health HTTP/1.0\r\n\r\n", [b"200"]),  # printf 'GET /health HTTP/1.0\r\n\r\n' | nc -N
        (
            b"GET /health HTTP/1.1\r\n" + HOST + b"\r\nGET /jobs HTTP/1.1\r\n" + HOST + b"\r\n",
            [b"200", b"200"],
        ),
        (b"POST /synth HTTP/1.1\r\n" + HOST + b"Content-Length: 2\r\n\r\n{}", [b"400"]),
        (b"G\x00ET / HTTP/1.1\r\n\r\n", [b"400"]),
    ],
    ids=["get", "http-1.0", "pipelined", "with-a-body", "malformed"],
)
async def test_whole_requests_before_a_half_close_are_answered(served, sent, answered):
    """aiohttp closed the connection at the caller's FIN, before answering: a health check that sends its
    request and half-closes got nothing, even from /health."""
    listener = await served()
    answer = await half_closed_exchange(listener.port, sent)
    assert statuses(answer) == answered, answer


async def test_a_half_close_still_stops_a_synth(served, tmp_path):
    """A FIN is how a caller hangs up: /synth stops its synthesis and writes no file, as it did when the
    connection closed at the FIN; the caller, still reading, is told so."""
    engine = ToneEngine(delay_per_chunk=0.05)  # 2 000 characters: 400 chunks, 20 s
    listener = await served(engine)
    wav = tmp_path / "never.wav"
    body = json.dumps({"text": "가" * 2000, "output_path": str(wav)}).encode()
    head = (
        b"POST /synth HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    )
    answer = await half_closed_exchange(listener.port, head % len(body) + body)
    assert statuses(answer) == [b"200"] and b'"error": "Cancelled: ' in answer, answer
    assert not wav.exists()


async def test_a_request_queued_behind_a_running_one_is_answered_after_a_half_close(served, tmp_path):
    """Pipelined behind a /synth that the FIN stops: the /health after it is answered too."""
    listener = await served(ToneEngine(delay_per_chunk=0.05))
    body = json.dumps({"text": "가" * 2000, "output_path": str(tmp_path / "never.wav")}).encode()
    head = (
        b"POST /synth HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    )
    health = b"GET /health HTTP/1.1\r\n" + HOST + b"\r\n"
    answer = await half_closed_exchange(listener.port, head % len(body) + body + health)
    assert statuses(answer) == [b"200", b"200"] and b'"error": "Cancelled: ' in answer, answer


@pytest.mark.parametrize(
    "sent",
    [
        b"POST /synth HTTP/1.1\r\n"
        + HOST
        + b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{}",
        b"GET /health HTTP/1.1\r\n" + HOST,
    ],
    ids=["body-cut-short", "headers-cut-short"],
)
async def test_a_half_close_inside_a_request_closes_at_once(served, sent):
    """What the FIN cut short is never answered: the connection closes at once (not after the body or
    header deadline, here a minute)."""
    listener = await served(body_timeout=60.0, header_timeout=60.0)
    answer = await half_closed_exchange(listener.port, sent)
    assert answer == b""


async def test_a_websocket_peer_that_half_closes_is_let_go(served):
    """A FIN on a WebSocket (no close frame) ends it at once, as before: its handler does not wait for
    the heartbeat."""
    listener = await served()
    handshake = (
        b"GET /ws HTTP/1.1\r\n" + HOST + b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    answer = await half_closed_exchange(listener.port, handshake)  # (it gives up after 5 s; heartbeat: 10 s)
    assert statuses(answer) in ([b"101"], []), answer
