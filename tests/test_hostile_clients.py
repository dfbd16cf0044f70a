"""Callers who leave mid-request or send bytes a header cannot carry, against the worker as `serve` runs
it (the connection guard, a real port): a quiet line, never an internal error with its traceback."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import weakref
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from npu_worker.http_compat.metrics import METRICS_KEY
from npu_worker.server import Listener
from tests.timing import seconds, until

BODY_ROUTES = ["/synth", "/synth_batch", "/v1/audio/speech", "/v1/audio/speech/batch"]


async def metrics(port: int) -> str:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics") as answer:
        return await answer.text()


@pytest.mark.parametrize("path", BODY_ROUTES)
async def test_a_caller_that_leaves_mid_body_is_one_quiet_line_not_a_500(served, caplog, path):
    listener = await served()
    caplog.set_level(logging.INFO)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n".encode() + b'{"te')
    await writer.drain()
    writer.close()
    async with asyncio.timeout(seconds(10)):
        while "the caller went away" not in caplog.text:
            await asyncio.sleep(0.02)
    assert "internal error" not in caplog.text and "Traceback" not in caplog.text
    text = await metrics(listener.port)
    assert 'status="500"' not in text and "ConnectionResetError" not in text


async def test_a_connection_closed_as_its_body_comes_is_one_quiet_line_not_a_500(served, caplog, monkeypatch):
    """The guard's eviction of a slow body (and aiohttp's shutdown) close a connection with aiohttp's
    force_close, which drops the transport at once: a handler that body bytes had just woken read on,
    and aiohttp's payload raised `RuntimeError: Connection closed.`, an internal error and a traceback."""
    from npu_worker import connection_guard

    original = connection_guard.GuardedHandler.data_received

    def closed_as_bytes_come(self: connection_guard.GuardedHandler, data: bytes) -> None:
        original(self, data)
        if data.endswith(b"CUT"):
            self.force_close()  # in the same loop turn as the bytes, as an eviction may be

    monkeypatch.setattr(connection_guard.GuardedHandler, "data_received", closed_as_bytes_come)
    listener = await served()
    caplog.set_level(logging.INFO)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n" + b'{"te')
    await until(lambda: listener.guard.requests, "the request to reach its handler")
    writer.write(b"CUT")
    await until(lambda: "the caller went away" in caplog.text or "internal error" in caplog.text)
    writer.close()
    assert "internal error" not in caplog.text and "Traceback" not in caplog.text


def requests_made(listener: Listener) -> list[weakref.ref[web.BaseRequest]]:
    """The requests the listener's server makes from now on, held weakly, as aiohttp makes each (its
    `request_factory`, which a connection's handler reads when it is made). A scan of the heap for them
    (`gc.get_objects()`) took seconds a test in the suite's worker, whose heap holds every earlier file's."""
    made: list[weakref.ref[web.BaseRequest]] = []
    server = listener.runner.server
    assert server is not None
    factory = server.request_factory

    def make_request(*args: Any) -> web.BaseRequest:
        request = factory(*args)
        made.append(weakref.ref(request))
        return request

    server.request_factory = make_request
    return made


@pytest.mark.parametrize("path", BODY_ROUTES)
async def test_a_body_cut_short_is_freed_at_once_not_by_the_next_full_collection(served, caplog, path):
    """aiohttp raises the error it keeps on the request's stream; its traceback held the request and the
    body read so far in a cycle: 40 uploads of 8 MiB cut short grew a worker by 280 MiB a round."""
    listener = await served()
    caplog.set_level(logging.INFO)
    requests = requests_made(listener)
    gc.collect()
    gc.disable()  # what the collector would free is what the worker holds until it happens to run
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        head = f"POST {path}?cut=short HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n"
        writer.write(head.encode() + b" " * 50_000)
        await writer.drain()
        async with asyncio.timeout(seconds(10)):
            while not requests:  # its head is parsed: the request is made in a turn or two
                await asyncio.sleep(0.01)
        assert [request().query_string for request in requests if request() is not None] == ["cut=short"]
        writer.close()
        async with asyncio.timeout(seconds(10)):
            while '?cut=short HTTP/1.1" 499' not in caplog.text:
                await asyncio.sleep(0.01)
            while any(request() is not None for request in requests):  # its task ends a turn or two later
                await asyncio.sleep(0.01)
    finally:
        gc.enable()


async def test_an_authorization_header_that_is_not_utf8_is_a_401(served):
    listener = await served(token="s3cret")
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(b"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xff\xfe\r\n\r\n")
        async with asyncio.timeout(seconds(10)):
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(
                next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1]
            )
            body = json.loads(await reader.readexactly(length))
    finally:
        writer.close()
    assert head.startswith(b"HTTP/1.1 401") and body["error"].startswith("Unauthorized")


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
async def test_a_websocket_key_that_is_not_ascii_is_a_400(served, path):
    listener = await served()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n".encode()
            + b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: \xff\xff\xff\r\n\r\n"
        )
        async with asyncio.timeout(seconds(10)):
            head = await reader.readuntil(b"\r\n\r\n")
    finally:
        writer.close()
    assert head.startswith(b"HTTP/1.1 400"), head


async def raw_answer(port: int, request: bytes) -> tuple[bytes, bytes]:
    """(status line and headers, body) of one raw request, the connection left open meanwhile."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        async with asyncio.timeout(seconds(5)):
            head = await reader.readuntil(b"\r\n\r\n")
            lengths = [h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")]
            body = await reader.readexactly(int(lengths[0].split(b":")[1])) if lengths else b""
    finally:
        writer.close()
    return head, body


@pytest.mark.parametrize("path", ["/synth", "/v1/audio/speech"])
async def test_a_declared_length_over_the_limit_is_a_413_at_once_not_a_408_later(served, path):
    listener = await served(max_body_bytes=1000, body_timeout=seconds(30))
    head, body = await raw_answer(
        listener.port, f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 90000000\r\n\r\n".encode()
    )  # no body follows: the answer must not wait for it
    assert head.startswith(b"HTTP/1.1 413"), head
    assert b"BodyTooLarge" in body


async def test_a_transfer_coding_other_than_chunked_is_a_400(served, tmp_path):
    listener = await served()
    payload = json.dumps({"text": "hi", "output_path": str(tmp_path / "x.wav")}).encode()
    chunk = f"{len(payload):x}\r\n".encode() + payload + b"\r\n0\r\n\r\n"
    head, body = await raw_answer(
        listener.port,
        b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" + chunk,
    )
    assert head.startswith(b"HTTP/1.1 400"), head
    assert b"Transfer-Encoding" in body and not (tmp_path / "x.wav").exists()


async def test_an_answer_nobody_reads_is_given_up_after_its_write_deadline(monkeypatch):
    """A whole flac or mp3 file (or a batch answer) written to a caller that never reads stayed in
    memory for as long as the caller kept the socket open."""
    import socket

    from aiohttp import web

    from npu_worker.http_compat import hang_up  # the OpenAI answers' writes too

    monkeypatch.setattr(hang_up, "WRITE_GRACE_SECONDS", 0.5)
    monkeypatch.setattr(hang_up, "MIN_READ_BYTES_PER_SECOND", 10**12)
    outcome: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

    async def big_answer(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        try:
            await hang_up.send_within(request, response, b"x" * (16 << 20))  # past every socket buffer
            outcome.set_result(None)
        except ConnectionError as exc:
            outcome.set_result(exc)
        return response

    app = web.Application()
    app.router.add_get("/", big_answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads
    try:
        await asyncio.get_running_loop().sock_connect(client, ("127.0.0.1", port))
        client.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        async with asyncio.timeout(seconds(10)):
            error = await outcome
        assert isinstance(error, ConnectionResetError) and "read nothing for" in str(error)
    finally:
        client.close()
        await runner.cleanup()


@pytest.mark.parametrize(
    ("overrides", "path", "headers", "status"),
    [
        ({"token": "s3cret"}, "/synth", "", 401),  # no token: refused before the body is sent
        ({}, "/synth", "Content-Length: 90000000\r\n", 413),
        ({}, "/v1/audio/speech", "Content-Length: 90000000\r\n", 413),
        ({"token": "s3cret"}, "/v1/audio/voices", "", 401),  # 5 MB of audio sent for nothing
        ({}, "/synth_batch?async=maybe", "", 400),  # refused before the body is read (docs/protocol.md)
        ({}, "/synth_batch?async=1&async=0", "", 400),  # a query parameter given twice
    ],
)
async def test_expect_100_continue_is_refused_before_the_body_when_the_request_cannot_pass(
    served, overrides, path, headers, status
):
    """aiohttp's own handler told every caller to send its body (a caller without the token, a body
    over the limit), then refused it."""
    listener = await served(max_body_bytes=1000, **overrides)
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n" + headers
    if "Content-Length" not in headers:
        head += "Content-Length: 20\r\n"
    answer, _ = await raw_answer(listener.port, (head + "\r\n").encode())
    assert answer.startswith(f"HTTP/1.1 {status}".encode()), answer
    assert b"100 Continue" not in answer


async def test_a_voice_upload_past_the_json_body_limit_is_still_told_to_continue(served):
    """A voice upload is bounded part by part (`--voice-max-bytes`), not by `--max-body-bytes`."""
    listener = await served(max_body_bytes=1000)
    head = (
        "POST /v1/audio/voices HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
        "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 200000\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(head.encode())
        async with asyncio.timeout(seconds(5)):
            assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
    finally:
        writer.close()


async def test_a_caller_that_resets_before_100_continue_costs_no_traceback(served, caplog):
    """`Expect: 100-continue`, then a reset: writing `100 Continue` failed in the expect handler,
    where aiohttp logs a 500's traceback (18 lines at ERROR per connection: a disk filler). Now it is
    a quiet 499, as for any caller that left early."""
    import socket
    import struct

    listener = await served()
    caplog.set_level(logging.INFO)
    head = (
        b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
        b"Content-Type: application/json\r\nContent-Length: 20\r\n\r\n"
    )
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", listener.port)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close: RST
            sock.sendall(head)
    registry = listener.runner.app[METRICS_KEY].registry
    labels = {"method": "POST", "route": "/synth", "status": "499"}
    async with asyncio.timeout(seconds(10)):
        while registry.get_sample_value("npu_worker_http_requests_total", labels) != 5:
            await asyncio.sleep(0.02)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


async def test_expect_refusals_have_the_error_body_and_are_counted(served):
    """aiohttp answers an expect handler's response itself, past the middlewares: an unknown
    `Expect` was a text/plain 417 and none of these refusals reached /metrics."""
    listener = await served(max_body_bytes=1000, token="s3cret")
    cases = [
        ("/synth", "Expect: 100-continue\r\n", 401),
        ("/synth", "Expect: 100-continue\r\nContent-Length: 90000000\r\n", 413),
        ("/synth", "Expect: bogus\r\n", 417),
        ("/v1/audio/speech", "Expect: bogus\r\n", 417),
    ]
    for path, headers, status in cases:
        auth = "" if status == 401 else "Authorization: Bearer s3cret\r\n"
        head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}{headers}"
        if "Content-Length" not in headers:
            head += "Content-Length: 20\r\n"
        answer, body = await raw_answer(listener.port, (head + "\r\n").encode())
        assert answer.startswith(f"HTTP/1.1 {status}".encode()), answer
        assert b"application/json" in answer
        error = json.loads(body)["error"]
        if path.startswith("/v1/"):
            assert error["code"] == "BadRequest" and "unknown Expect: 'bogus'" in error["message"]
        elif status == 417:
            assert error == "BadRequest: unknown Expect: 'bogus'"
    registry = listener.runner.app[METRICS_KEY].registry
    for route, status, count in (("/synth", "401", 1), ("/synth", "413", 1), ("/synth", "417", 1)):
        labels = {"method": "POST", "route": route, "status": status}
        assert registry.get_sample_value("npu_worker_http_requests_total", labels) == count
    labels = {"method": "POST", "route": "/v1/audio/speech", "status": "417"}
    assert registry.get_sample_value("npu_worker_http_requests_total", labels) == 1
    assert registry.get_sample_value("npu_worker_errors_total", {"name": "BadRequest"}) == 2


@pytest.mark.parametrize("queue", ["local", "redis"])
async def test_a_section_wav_nobody_reads_is_given_up_after_its_write_deadline(
    served, monkeypatch, tmp_path, request, queue
):
    """`GET .../audio` waits for each piece to be taken: a caller that never read held its connection
    (one of `--max-connections`, which it cannot be evicted from) and the open file (or Redis's copy,
    whole) for as long as it kept the socket open."""
    import socket

    from npu_worker.http_compat import hang_up
    from tests.tone_engine import ToneEngine

    monkeypatch.setattr(hang_up, "WRITE_GRACE_SECONDS", 0.5)
    monkeypatch.setattr(hang_up, "MIN_READ_BYTES_PER_SECOND", 10**12)
    settings = {"queue": request.getfixturevalue("redis_server").url} if queue == "redis" else {}
    listener = await served(ToneEngine(seconds_per_char=0.1, chunk_seconds=10.0), **settings)
    section = {"idx": 0, "text": "가" * 2000, "output_path": str(tmp_path / "long.wav")}  # 200 s: 9.6 MB
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{listener.port}/synth_batch"
        async with session.post(url, json={"sections": [section], "stream": False}) as answer:
            job_id = (await answer.json())["job_id"]
    await until(lambda: not listener.guard.open, "the batch's connection to close")
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads: past every buffer
    client.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(client, ("127.0.0.1", listener.port))
        await asyncio.get_running_loop().sock_sendall(
            client, f"GET /jobs/{job_id}/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
        await until(lambda: listener.guard.open, "the download's connection to open")
        await until(lambda: not listener.guard.open, "the worker to give up on the download")
    finally:
        client.close()


TOKEN = "Authorization: Bearer s3cret\r\n"


def connection_tasks() -> list[asyncio.Task[Any]]:
    """The tasks serving connections (aiohttp's `RequestHandler.start`, one a connection)."""
    return [task for task in asyncio.all_tasks() if task.get_coro().__qualname__ == "RequestHandler.start"]


@pytest.mark.parametrize("ending", ["reset", "close"])
@pytest.mark.parametrize(
    ("path", "headers", "status"),
    [
        ("/synth", f"{TOKEN}Content-Length: 90000000\r\n", 413),  # the app's, before the body is read
        ("/synth", f"{TOKEN}Expect: 100-continue\r\nContent-Length: 90000000\r\n", 413),  # aiohttp's Expect
        ("/synth", "Authorization: Bearer wrong\r\nContent-Length: 20\r\n", 401),
    ],
)
async def test_a_connection_refused_before_its_body_ends_when_its_caller_has_gone(
    served, monkeypatch, path, headers, status, ending
):
    """aiohttp drains the body of a request answered before it was read for `lingering_time`, so that
    the caller gets its answer; a caller that had read it and gone (a reset, a close) left nothing to
    drain, yet its connection's task waited out the whole linger (1 s; a flood of such connections held
    a task each). The linger made long here: the task must end with the connection, not with the linger.
    A 413 closes its connection: no task drains it, it lingers (`lingering_close`) until the caller goes."""
    import socket
    import struct

    from npu_worker import lingering_close, server

    monkeypatch.setattr(server, "LINGER_SECONDS", seconds(30))
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", seconds(30))
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", seconds(30))
    listener = await served(max_body_bytes=1000, token="s3cret")
    before = set(connection_tasks())
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
    async with asyncio.timeout(seconds(5)):
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(f"HTTP/1.1 {status}".encode())
    serving = set(connection_tasks()) - before
    assert len(serving) == (
        1 if status == 401 else 0
    )  # the 401's task drains the body never sent; the 413 lingers
    assert listener.guard.open  # either way the connection waits for the caller
    if ending == "reset":
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close: RST
    writer.close()
    async with asyncio.timeout(seconds(10)):
        if serving:
            await asyncio.wait(serving)
    await until(lambda: not listener.guard.open, "the connection to end with its caller")
