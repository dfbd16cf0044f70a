"""Slow clients on a real socket: the header and body deadlines, a reply its caller leaves unread, and a
request whose caller hung up. (The connection cap: test_server_connection_cap.py; parser refusals:
test_server_parser_refusals.py; the access log: test_server_access_log.py.)"""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from npu_worker import unread_replies
from npu_worker.app_keys import SCHEDULER_KEY
from tests.raw_http import raw_exchange
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def test_headers_that_trickle_are_cut_at_the_header_timeout(served):
    listener = await served(header_timeout=0.3)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"GET /health HTTP/1.1\r\nHo")
    await writer.drain()
    async with asyncio.timeout(seconds(5)):
        assert await reader.read() == b""  # closed by the server, no request was ever complete
    writer.close()
    assert listener.guard.timed_out == 1


async def test_a_silent_connection_is_cut_too_but_a_prompt_request_is_not(served):
    listener = await served(header_timeout=1.0)  # the prompt request must not lose to a loaded machine
    assert await raw_exchange(listener.port, b"", seconds(5)) == b""
    answer = await raw_exchange(
        listener.port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", seconds(5)
    )
    assert answer.startswith(b"HTTP/1.1 200")


async def test_a_body_that_trickles_is_a_408(served):
    listener = await served(body_timeout=0.3)
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    answer = await raw_exchange(listener.port, head + b'{"text"', seconds(20))
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout"
    body = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert body["error"].startswith("RequestTimeout: ") and body["traceback"] is None


@pytest.mark.parametrize("close", [True, False])
async def test_a_reply_its_caller_leaves_unread_ends_the_connection(served, monkeypatch, caplog, close):
    """A caller that stops reading: once the kernel's buffers are full, the rest of a reply waits in the
    worker. Its close (`Connection: close`, or the header deadline after a kept-alive reply) waited for
    that rest to be sent, so the connection stayed open and counted against the cap for ever, evictable
    by nothing. (A small send buffer here, as a slow link's stays: loopback's grows to megabytes.)"""
    monkeypatch.setattr(unread_replies, "UNREAD_SECONDS", 0.5)
    listener = await served(header_timeout=0.2)
    loop = asyncio.get_running_loop()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # and it never reads
    client.setblocking(False)
    try:
        await loop.sock_connect(client, ("127.0.0.1", listener.port))
        await until(lambda: listener.guard.open, "the connection to open")
        (handler,) = listener.guard.open
        handler.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        head = b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # 42 KB
        await loop.sock_sendall(client, head + (b"Connection: close\r\n" if close else b"") + b"\r\n")
        await until(lambda: not listener.guard.open, "the worker to drop the connection")
    finally:
        client.close()
    assert "Traceback" not in caplog.text and "internal error" not in caplog.text


@pytest.mark.parametrize(
    "path, fields",
    [
        ("/synth", {}),
        ("/v1/audio/speech", {"model": "tts-1", "voice": "default", "response_format": "flac"}),
        ("/v1/audio/speech", {"model": "tts-1", "response_format": "mp3", "stream_format": "sse"}),
    ],
)
async def test_a_request_whose_caller_hung_up_stops_and_writes_nothing(served, tmp_path, path, fields):
    """As `serve` runs it, aiohttp leaves a handler running when its client goes (its test server
    cancels it, which hid this); a handler that writes nothing until the end (a /synth, a flac or mp3
    encoded whole) notices and cancels, so a caller's timeout does not keep the engine busy."""
    engine = ToneEngine(delay_per_chunk=0.05)  # 2 000 characters: 400 chunks, 20 s
    listener = await served(engine=engine)
    text = "가" * 2000
    request = (
        {"input": text, **fields} if fields else {"text": text, "output_path": str(tmp_path / "never.wav")}
    )
    body = json.dumps(request).encode()
    head = b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" % path.encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    await until(lambda: engine.calls, "the section to start")  # flac and mp3 answer only at the end
    writer.close()
    scheduler = listener.runner.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(5)):
        while scheduler.jobs_running():
            await asyncio.sleep(0.05)
    assert not (tmp_path / "never.wav").exists()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/synth_batch", {"sections": [{"idx": 0, "text": "hi"}]}),  # NDJSON
        ("/v1/audio/speech", {"model": "tts-1", "input": "hi", "voice": "default", "response_format": "pcm"}),
    ],
)
async def test_a_stream_to_an_http_1_0_keep_alive_caller_ends_with_its_connection(served, path, body):
    """HTTP/1.0 has no chunks: a stream's end is the connection's. aiohttp kept the connection of a
    caller that asked for keep-alive open (its response said nothing of it), so the caller, reading to
    the close, waited for the header deadline (10 s) after every stream."""
    listener = await served(header_timeout=60.0)
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    answer = await raw_exchange(listener.port, head.encode() + data, seconds(10))  # to the close
    assert answer.startswith(b"HTTP/1.0 200 ") and b"keep-alive" not in answer.partition(b"\r\n\r\n")[0]
