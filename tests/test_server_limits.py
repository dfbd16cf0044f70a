"""Slow and greedy clients on a real socket: header and body deadlines, the connection cap (with a
health check still answered when trickling sockets outnumber the file descriptors), parser refusals
in the JSON error body, and no token in the access log."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from npu_worker import connection_guard
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.http_compat.metrics import METRICS_KEY
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine
from tests.worker_process import free_port, start_worker_process


async def raw_exchange(port: int, data: bytes, read_timeout: float) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        async with asyncio.timeout(read_timeout):
            return await reader.read()  # until the server closes
    finally:
        writer.close()


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


@pytest.mark.parametrize(
    ("rest", "said"),
    [
        (b"ZZ\r\nhello\r\n0\r\n\r\n", "Invalid character in chunk size"),
        (b"5\r\nhelloXX0\r\n\r\n", "Expected LF after chunk data"),
        (b"0\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n", "Too many headers"),
    ],
)
async def test_a_chunked_body_malformed_after_its_start_is_a_400_at_once(served, caplog, rest, said):
    """aiohttp's parser, refusing bytes inside a body its handler was already reading, queued its 400
    for after that request and left the body open: the caller waited `--body-timeout` for a 408 that
    blamed a slow network."""
    listener = await served(body_timeout=seconds(60))
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = await body_refused_after_its_start(listener, head + b'5\r\n{"tex\r\n', rest)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer
    error = json.loads(body)["error"]
    assert error.startswith("BadRequest: the body is malformed: ") and said in error, error
    assert "Traceback" not in caplog.text  # (aiohttp read on after the answer: "Unhandled exception")


async def test_a_voice_upload_malformed_after_its_start_is_a_400_at_once(served, caplog):
    listener = await served(body_timeout=seconds(60))
    part = b'--xx\r\nContent-Disposition: form-data; name="name"\r\n\r\nv1\r\n'
    head = (
        b"POST /v1/audio/voices HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Type: multipart/form-data; boundary=xx\r\n\r\n"
    )
    answer = await body_refused_after_its_start(
        listener, head + b"%x\r\n%s\r\n" % (len(part), part), b"ZZ\r\n"
    )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer
    assert "Invalid character in chunk size" in json.loads(body)["error"]["message"]
    assert "Traceback" not in caplog.text


async def test_a_body_nobody_reads_that_breaks_costs_no_traceback(served, caplog):
    """A long answer (a running job's events) to a request whose chunked body, never read, then broke:
    after the answer aiohttp read that body on and logged the parser's error as an unhandled exception."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    listener = await served(engine)
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
        async with session.post(url, json={"sections": [{"text": "held."}]}) as accepted:
            job_id = (await accepted.json())["job_id"]
    head = f"GET /jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(head.encode() + b"1\r\na\r\n")
        async with asyncio.timeout(seconds(10)):
            answer = await reader.read()
        with contextlib.suppress(ConnectionError):  # the rest, broken, to a closed connection
            writer.write(b"ZZ\r\n")
        writer.close()
    finally:
        engine.gate.set()
    # A GET takes no body (test_body_budget.py): refused at once, no stream runs over an unread body.
    assert answer.startswith(b"HTTP/1.1 400 ") and b"takes no body" in answer
    assert "Traceback" not in caplog.text and "Unhandled exception" not in caplog.text


async def body_refused_after_its_start(listener, start: bytes, rest: bytes) -> bytes:
    """Send `start` (headers, the body's first chunk), then `rest` once the request has reached its
    handler; the whole answer, up to the close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(start)
        await until(lambda: listener.guard.open and not listener.guard.waiting, "the request's headers")
        writer.write(rest)
        async with asyncio.timeout(seconds(10)):
            return await reader.read()  # and the connection is closed after it
    finally:
        writer.close()


@pytest.mark.parametrize(
    "request_bytes",
    [b"GARBAGE\r\n\r\n", b"GET /health HTTP/1.1\r\nBad Header\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n"],
)
async def test_unparsable_requests_get_the_json_error_body(served, request_bytes):
    listener = await served()
    answer = await raw_exchange(listener.port, request_bytes, seconds(5))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"400" and b"application/json" in head
    parsed = json.loads(body)
    assert parsed["status"] == "fail" and parsed["error"].startswith("BadRequest: ")


async def test_a_coding_aiohttp_cannot_decode_is_named_without_its_install_advice(served):
    if importlib.util.find_spec("brotli") or importlib.util.find_spec("brotlicffi"):
        pytest.skip("aiohttp decodes br where a Brotli module is installed")
    listener = await served()
    body = b'{"text": "hi"}'
    head = (
        b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Encoding: br\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    answer = await raw_exchange(listener.port, head + body, seconds(5))
    status, _, rest = answer.partition(b"\r\n")
    assert status.split(b" ")[1] == b"400"
    error = json.loads(rest.partition(b"\r\n\r\n")[2])["error"]
    assert error == "BadRequest: Content-Encoding 'br' is not supported: send the body as is, gzip or deflate"


async def test_over_the_cap_the_oldest_trickler_is_evicted_and_health_answers(served):
    listener = await served(max_connections=20, header_timeout=60.0)
    socks = []
    for _ in range(40):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(b"GET / HTTP/1.1\r\n")
        socks.append((reader, writer))
    async with asyncio.timeout(seconds(10)):
        answer = await raw_exchange(
            listener.port,
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            seconds(10),
        )
    assert answer.startswith(b"HTTP/1.1 200")
    assert len(listener.guard.open) <= 20 and listener.guard.evicted >= 20
    assert closed_by_guard(listener, "evicted") == listener.guard.evicted
    for _, writer in socks:
        writer.close()


HEALTH_REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize("close", [True, False])
async def test_a_reply_its_caller_leaves_unread_ends_the_connection(served, monkeypatch, caplog, close):
    """A caller that stops reading: once the kernel's buffers are full, the rest of a reply waits in the
    worker. Its close (`Connection: close`, or the header deadline after a kept-alive reply) waited for
    that rest to be sent, so the connection stayed open and counted against the cap for ever, evictable
    by nothing. (A small send buffer here, as a slow link's stays: loopback's grows to megabytes.)"""
    monkeypatch.setattr(connection_guard, "UNREAD_SECONDS", 0.5)
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


async def test_over_the_cap_the_longest_arriving_body_is_evicted_and_health_answers(
    served, monkeypatch, tmp_path
):
    """Sockets that send their headers at once and then trickle a body were all "in use": at the cap
    a health check was refused for as long as they kept coming back (each for `--body-timeout`). A
    request whose body is in (running) is never the one closed."""
    monkeypatch.setattr(connection_guard, "SLOW_BODY_SECONDS", 0.0)
    engine = ToneEngine()
    engine.gate = threading.Event()  # the running /synth stays in use
    listener = await served(engine=engine, max_connections=4, body_timeout=60.0)
    body = json.dumps({"text": "held", "output_path": str(tmp_path / "held.wav")}).encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    try:
        writers = []
        for sent in (body, b"{", b"{", b"{"):  # the oldest is whole; then three bodies still coming
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + sent)
            writers.append((reader, writer))
            await until(lambda: len(listener.guard.open) == len(writers) and not listener.guard.waiting)
        answer = await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))
        assert answer.startswith(b"HTTP/1.1 200"), answer
        async with asyncio.timeout(seconds(10)):
            assert await writers[1][0].read() == b""  # the longest arriving body: closed, no answer
        assert closed_by_guard(listener, "slow_body") == listener.guard.slow_bodies == 1
        assert [reader.at_eof() for reader, _ in writers] == [False, True, False, False]
    finally:
        engine.gate.set()
        for _, writer in writers:
            writer.close()


async def hold_a_request(socket_: aiohttp.ClientWebSocketResponse, text: str) -> None:
    """Start a preview on `socket_` and wait for its `start` (the engine's gate holds its audio)."""
    await socket_.send_json({"type": "synth", "text": text})
    async with asyncio.timeout(seconds(10)):
        while (await socket_.receive_json())["event"] != "start":
            pass


@contextlib.asynccontextmanager
async def open_sockets(served, count: int) -> AsyncIterator[tuple[Any, Callable[[], Any], list[Any]]]:
    """A worker capped at `count` connections with `count` idle /ws sockets open on it; its engine holds
    every request (`hold_a_request`) until the test ends. Yields (listener, connect another, sockets)."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    listener = await served(engine=engine, max_connections=count)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/ws"

            def connect() -> Any:
                return session.ws_connect(url)

            yield listener, connect, [await connect() for _ in range(count)]
    finally:
        engine.gate.set()


async def test_over_the_cap_the_longest_idle_websocket_is_closed_and_health_answers(served):
    async with open_sockets(served, 4) as (listener, connect, sockets):
        await hold_a_request(sockets[1], "held on the engine")  # in use: never the one closed
        for expected_closed in (0, 2):  # the longest idle first
            if expected_closed == 2:  # the room socket 0 left is taken again
                sockets.append(await connect())
            answer = await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))
            assert answer.startswith(b"HTTP/1.1 200")
            async with asyncio.timeout(seconds(10)):
                closing = await sockets[expected_closed].receive()
            assert closing.type == aiohttp.WSMsgType.CLOSE
            assert closing.data == aiohttp.WSCloseCode.TRY_AGAIN_LATER
            assert closing.extra == "idle connection closed to admit another"
        assert listener.guard.reclaimed == 2
        async with asyncio.timeout(seconds(5)):  # sockets 1, 3 and 4 (the health checks have ended)
            while len(listener.guard.open) != 3:
                await asyncio.sleep(0.01)
        assert not any(sockets[number].closed for number in (1, 3, 4))


def closed_by_guard(listener, reason: str) -> float:
    """What /metrics says about the guard's closes (read from the registry: the socket may be full)."""
    registry = listener.runner.app[METRICS_KEY].registry
    return registry.get_sample_value("npu_worker_connections_closed_total", {"reason": reason}) or 0.0


async def test_when_every_connection_is_in_use_a_new_one_is_refused(served, caplog):
    async with open_sockets(served, 2) as (listener, _, sockets):
        for number, socket_ in enumerate(sockets):
            await hold_a_request(socket_, f"held {number}")
        assert await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10)) == b""
        assert listener.guard.reclaimed == 0 and not any(s.closed for s in sockets)
        assert closed_by_guard(listener, "refused") == 1
        assert "all 2 connections are in use" in caplog.text  # the operator sees callers shut out


async def receive_type(socket_: aiohttp.ClientWebSocketResponse, kind: str) -> None:
    async with asyncio.timeout(seconds(10)):
        while True:
            message = await socket_.receive()
            if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data)["type"] == kind:
                return
            assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message


async def assert_reclaimed(listener, socket_: aiohttp.ClientWebSocketResponse) -> None:
    """A health check gets in, and `socket_` is the one closed with 1013 to make room."""
    assert (await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))).startswith(b"HTTP/1.1 200")
    async with asyncio.timeout(seconds(10)):
        while (closing := await socket_.receive()).type != aiohttp.WSMsgType.CLOSE:
            pass
    assert (closing.data, closing.extra) == (
        aiohttp.WSCloseCode.TRY_AGAIN_LATER,
        "idle connection closed to admit another",
    )


async def test_an_idle_speech_stream_socket_makes_room_but_one_mid_utterance_does_not(served):
    """`/v1/audio/speech/stream`: a socket between utterances is idle like an idle /ws socket; one with
    a fragment waiting for the rest of its sentence (an LLM pausing) or a sentence still to send is not."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    listener = await served(engine=engine, max_connections=3)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/v1/audio/speech/stream"
            pausing, idle, speaking = [await session.ws_connect(url) for _ in range(3)]
            await pausing.send_json({"type": "input.text", "text": "half a sente"})
            await speaking.send_json({"type": "input.text", "text": "Held on the engine."})
            await speaking.send_json({"type": "input.done"})
            await receive_type(speaking, "audio.start")  # its sentence runs, held by the gate
            await assert_reclaimed(listener, idle)
            engine.gate.set()
            await receive_type(speaking, "session.done")  # spoken: idle now
            newer = await session.ws_connect(url)  # the cap reached again, by a socket idle for less time
            await assert_reclaimed(listener, speaking)
            assert listener.guard.reclaimed == 2 and not pausing.closed and not newer.closed
            await pausing.send_json({"type": "input.done"})
            await receive_type(pausing, "session.done")  # the paused utterance is still there
    finally:
        engine.gate.set()


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


async def test_the_access_log_never_shows_a_token(served, caplog):
    listener = await served(token="s3cret-value")
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    queries = (
        "token=s3cret-value",
        "a=1&token=s3cret-value",
        "tok%65n=s3cret-value",
        "a=1;token=s3cret-value",
    )
    for query in queries:  # the last: yarl reads `;` as part of `a`'s value, and it was logged whole
        answer = await raw_exchange(
            listener.port,
            f"GET /jobs?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode(),
            seconds(5),
        )
        assert answer.startswith(b"HTTP/1.1 200") or ";" in query  # a `;` token is not read: 401
    lines = [r.getMessage() for r in caplog.records if r.name == "aiohttp.access"]
    assert len(lines) == 4
    assert all("s3cret" not in line and "token=***" in line for line in lines)


async def test_the_access_log_line_of_a_long_request_is_cut(served, caplog):
    """A request line of 8 KB (its query quoted again: 22 KB) was one log line that long: one caller
    could fill the disk many times faster than with ordinary requests. The path and query are cut."""
    listener = await served(token="s3cret-value")
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    for target in ("/" + "a" * 7000, "/health?a=" + "{}|^`" * 1500 + "&token=s3cret-value"):
        request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        assert (await raw_exchange(listener.port, request.encode(), seconds(5))).startswith(b"HTTP/1.1 ")
    lines = [r.getMessage() for r in caplog.records if r.name == "aiohttp.access"]
    assert len(lines) == 2 and all(len(line) < 700 and "chars)" in line for line in lines)
    assert '"GET /aaaa' in lines[0] and '"GET /health?a=%7B%7D' in lines[1] and "s3cret" not in lines[1]


async def test_a_refused_unparsable_request_logs_no_token(served, caplog):
    """aiohttp's refusal quotes the refused line (a ?token= or an Authorization header) on its next
    lines: the debug log keeps its first line only, so a token never reaches the log file."""
    listener = await served(token="s3cret-value")
    caplog.set_level(logging.DEBUG)
    for refused in (
        b"GET /jobs?token=s3cret-value&lang=\xed\x95\x9c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret-value\x01\r\n\r\n",
    ):
        answer = await raw_exchange(listener.port, refused, seconds(5))
        assert answer.split(b" ")[1] == b"400"
    refusals = [r.getMessage() for r in caplog.records if "unparsable" in r.getMessage()]
    assert len(refusals) == 2
    assert "s3cret" not in caplog.text and all("\n" not in line for line in refusals)


async def test_unparsable_requests_are_counted_in_the_metrics(served):
    """/metrics counts every answer, refusals included: aiohttp's parser refusals too (a scanner's
    garbage was invisible there), as method UNKNOWN on no route."""
    listener = await served()
    for refused in (b"GARBAGE\r\n\r\n", b"FOO / HTTP/1.1\r\n\r\n", b"GET /\x1b[31m HTTP/1.1\r\n\r\n"):
        assert (await raw_exchange(listener.port, refused, seconds(5))).split(b" ")[1] == b"400"
    registry = listener.runner.app[METRICS_KEY].registry
    labels = {"method": "UNKNOWN", "route": "unmatched", "status": "400"}
    assert registry.get_sample_value("npu_worker_http_requests_total", labels) == 3
    assert registry.get_sample_value("npu_worker_errors_total", {"name": "BadRequest"}) == 3


@pytest.mark.allow_blocking
def test_health_answers_while_trickling_sockets_outnumber_the_fd_limit(tmp_path: Path):
    """The issue's lockout, scaled down: ulimit -n 128 and 150 sockets sending a header byte now and then."""
    port = free_port()
    process = start_worker_process(
        tmp_path / "state", port, delay=0.0, extra=["--nofile", "128", "--max-connections", "64"]
    )
    socks: list[socket.socket] = []
    try:
        for _ in range(150):
            sock = socket.create_connection(("127.0.0.1", port), timeout=seconds(5))
            sock.sendall(b"GET / HTTP/1.1\r\n")
            socks.append(sock)
        for sock in socks:
            try:
                sock.sendall(b"X")
            except OSError:
                pass  # evicted: what the cap is for
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=seconds(10)) as response:
            assert json.loads(response.read())["loaded"] is True
        assert time.monotonic() - started < seconds(5)
    finally:
        for sock in socks:
            sock.close()
        process.terminate()
        process.wait(timeout=seconds(10))


def test_the_soft_open_file_limit_is_raised_to_what_max_connections_needs(caplog):
    import resource

    from npu_worker import server

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 64 + server.ACCEPT_BACKLOG + server.RESERVED_FILES
    if hard != resource.RLIM_INFINITY and hard < needed + 1:
        pytest.skip(f"the hard limit ({hard}) is too low to raise the soft one here")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed - 100, hard))
        server.fit_open_file_limit(64)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == needed
        server.fit_open_file_limit(10**9)  # more than the hard limit allows: said, not refused
        assert "--max-connections 1000000000 needs about" in caplog.text and "ulimit -n" in caplog.text
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_accept_failures_are_one_line_per_interval():
    from npu_worker.server import AcceptFailureThrottle

    throttle = AcceptFailureThrottle(interval=60.0)

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, None)

    failures = [record("socket.accept() out of system resource\nsocket: <...>") for _ in range(100)]
    passed = [r for r in failures if throttle.filter(r)]
    assert len(passed) == 1 and "no free file descriptor" in passed[0].getMessage()
    assert throttle.filter(record("something else from asyncio"))


@pytest.mark.allow_blocking
def test_a_callers_method_names_cannot_grow_the_metrics(tmp_path: Path):
    """aiohttp's pure-Python parser (AIOHTTP_NO_EXTENSIONS, or a platform without its C extension)
    takes any token as a method: each `FOO1`, `FOO2`... was a new series of the requests counter, and
    an 8 KB method an 8 KB access log line. A method outside the standard ones is `OTHER`."""
    import os

    port = free_port()
    env = {**os.environ, "AIOHTTP_NO_EXTENSIONS": "1"}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = start_worker_process(tmp_path / "state", port, 0.0, env=env, stderr=out)
    try:
        for number in range(30):
            method = f"FOO{number}" + "X" * (1000 if number == 0 else 0)
            request = urllib.request.Request(f"http://127.0.0.1:{port}/health", method=method)
            with contextlib.suppress(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=seconds(10)).close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=seconds(10)) as response:
            text = response.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=seconds(10))
    counted = [line for line in text.splitlines() if line.startswith("npu_worker_http_requests_total{")]
    assert not any("FOO" in line for line in counted)
    assert any('method="OTHER",route="unmatched",status="405"} 30.0' in line for line in counted)
    access = [line for line in log.read_text().splitlines() if "aiohttp.access" in line]
    assert len(access) >= 30 and all(len(line) < 200 for line in access)
