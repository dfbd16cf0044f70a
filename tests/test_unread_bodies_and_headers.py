"""What a connection holds outside the body budget, on a real socket: a body on a route that reads none,
one pipelined behind a long answer or drained after an early one, and request headers past 64 KiB."""

from __future__ import annotations

import asyncio
import gc
import json

import aiohttp
import pytest
from aiohttp.streams import StreamReader

from npu_worker import server
from tests.body_support import KIB, lecture_batch, raw_answer
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


@pytest.mark.parametrize(
    ("path", "shape"), [("/jobs/{job}/events", "v1"), ("/v1/models", "openai"), ("/jobs/{job}", "v1")]
)
async def test_a_body_on_a_route_that_reads_none_is_refused_not_buffered(served, path, shape):
    """Only POST routes read a body. Before, aiohttp buffered an unread one (over twice its 256 KiB read size
    a connection), outside the budget, for as long as the answer ran (a running job's events)."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()  # the job runs on: its events are followed
    listener = await served(engine)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, json={"sections": [{"idx": 0, "text": "안녕하세요"}]}) as answer:
                job = (await answer.json())["job_id"]
        method = "DELETE" if path == "/jobs/{job}" else "GET"
        target = path.format(job=job).encode()
        head = (
            method.encode()
            + b" "
            + target
            + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 600000\r\n\r\n"
        )
        status, _, body = await raw_answer(listener.port, head + b" " * 600_000)
        assert status.startswith(b"HTTP/1.1 400 ")
        error = body["error"]["message"] if shape == "openai" else body["error"]
        assert f"a {method} request takes no body" in error
        # an empty body is no body: a DELETE with Content-Length: 0 (some clients send it) is served
        empty = (
            b"DELETE " + f"/jobs/{job}".encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
        )
        status, _, body = await raw_answer(listener.port, empty + b"Connection: close\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 200 "), body
    finally:
        gate.open()


def unread_body_bytes() -> int:
    """What aiohttp's payload streams hold now, read by nobody yet (their private `_size`)."""
    # (type, not isinstance: a dead weak proxy among the objects raises on isinstance)
    return sum(stream._size for stream in gc.get_objects() if type(stream) is StreamReader)


async def test_a_body_pipelined_behind_a_long_answer_is_buffered_little(served):
    """A request pipelined behind a running job's events waits in aiohttp's parser with its body,
    which no handler reads and the budget cannot see: reading stops at twice aiohttp's read size (256
    KiB in aiohttp 3.14: over 512 KiB held by each such connection), now at twice 64 KiB."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()  # the job runs on: its events are followed
    listener = await served(engine)
    writers = []
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, json={"sections": [{"idx": 0, "text": "안녕하세요"}]}) as answer:
                job = (await answer.json())["job_id"]
        before = unread_body_bytes()
        for _ in range(4):
            _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(
                f"GET /jobs/{job}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                "POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8000000\r\n\r\n".encode()
                + b" " * 2_000_000
            )
            writers.append(writer)
        await asyncio.sleep(0.5)  # (what the kernel takes, the worker reads, up to its pause)
        # each: up to 128 KiB, and the piece that passed it (up to 256 KiB); before, 512 KiB at least
        assert unread_body_bytes() - before < 4 * 480 * KIB
    finally:
        gate.open()
        for writer in writers:
            writer.transport.abort()


def lines(count: int) -> str:
    """`count` header lines of about 4 KB each."""
    return "".join(f"X-Pad-{n}: {'a' * 4000}\r\n" for n in range(count))


@pytest.mark.parametrize(("path", "shape"), [("/jobs", "v1"), ("/v1/models", "openai")])
async def test_request_headers_past_64_kib_are_refused_not_kept_for_the_answer(served, path, shape):
    """aiohttp takes 128 header lines of 8 KiB: a request kept them, as sent and as text, for as long
    as its answer ran (a job's events), outside any budget."""
    listener = await served()
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    status, _, body = await raw_answer(listener.port, (head + lines(17) + "\r\n").encode())
    assert status.startswith(b"HTTP/1.1 431 ")
    error = body["error"]["message"] if shape == "openai" else body["error"]
    assert "the request headers are " in error and "the limit is 65536" in error
    status, _, _ = await raw_answer(listener.port, (head + lines(15) + "\r\n").encode())
    assert status.startswith(b"HTTP/1.1 200 ")


async def test_headers_that_pass_64_kib_unfinished_are_refused_before_the_header_deadline(served):
    """aiohttp holds each whole header line until the request is complete: a connection that sent up to
    128 lines of 8 KiB and never ended its headers held them until the header deadline."""
    listener = await served(header_timeout=30.0)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(f"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines(17)}".encode())  # no blank line
        async with asyncio.timeout(seconds(5)):
            answer = await reader.read()
        assert answer.startswith(b"HTTP/1.1 431 ") and b"BadRequest: the request headers pass 65536" in answer
        # (after the answer the connection lingers, 2 s of silence at most: not until the header deadline)
        await until(lambda: not listener.guard.open and not listener.guard.waiting, "the connection to end")
    finally:
        writer.transport.abort()


async def test_a_lecture_batch_pipelined_behind_another_request_is_served(served):
    """Its headers are parsed while the first request runs: its body is never counted as headers."""
    listener = await served()
    batch = lecture_batch()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            + f"POST /synth_batch?async=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(batch)}\r\n\r\n".encode()
            + batch
        )
        async with asyncio.timeout(seconds(10)):
            answers = await reader.read()
    finally:
        writer.transport.abort()
    assert answers.startswith(b"HTTP/1.1 200 ")
    assert answers.count(b"HTTP/1.1 200 ") == 2 and b'"total": 39' in answers, answers[-300:]


async def test_a_body_drained_after_an_early_answer_is_not_counted_as_the_next_headers(served, monkeypatch):
    """A lecture batch sent with a wrong token is answered 401 before its body is read; aiohttp then
    drains the body and keeps the connection. Before, the drained body counted as the next request's
    headers: past 64 KiB the caller got a stray 431 and its connection cut while it was still sending
    (a reset, not the 401), and the next request on the connection was never answered."""
    monkeypatch.setattr(server, "LINGER_SECONDS", seconds(10))  # (the drain is not what is tested)
    listener = await served(token="a-token-of-twenty-chars")
    batch = lecture_batch()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(
            b"POST /synth_batch?async=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n"
            + f"Content-Type: application/json\r\nContent-Length: {len(batch)}\r\n\r\n".encode()
        )
        async with asyncio.timeout(seconds(10)):
            refused = await reader.readuntil(b"\r\n\r\n")
            assert refused.startswith(b"HTTP/1.1 401 ")
            length = int(refused.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            writer.write(batch + b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            after = await reader.read()
    finally:
        writer.transport.abort()
    assert after.startswith(b"HTTP/1.1 200 ") and b'"ready": true' in after, after[:200]


@pytest.mark.parametrize(
    ("method", "path", "answer"), [("GET", "/health", 200), ("DELETE", "/jobs/none", 404)]
)
async def test_an_empty_chunked_body_on_a_route_that_reads_none_is_no_body(served, method, path, answer):
    """`Transfer-Encoding: chunked` with only its last chunk is an empty body, as `Content-Length: 0`
    is (a client that streams an empty body sends it): before, `a GET request takes no body`."""
    listener = await served()
    status, _, body = await raw_answer(
        listener.port,
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n".encode()
        + b"Connection: close\r\n\r\n0\r\n\r\n",
    )
    assert status.startswith(f"HTTP/1.1 {answer} ".encode()), body


@pytest.mark.parametrize(("method", "path"), [("PUT", "/synth_batch"), ("PATCH", "/v1/audio/speech")])
async def test_a_body_sent_with_a_wrong_method_is_told_the_method_is_wrong(served, method, path):
    """A lecture batch PUT to `/synth_batch` was told `a PUT request takes no body`, as if only the
    body were wrong: it is the method (405, with `Allow`), and the connection still closes unread."""
    listener = await served()
    batch = json.dumps({"sections": [{"idx": 0, "text": "안녕하세요"}]}).encode()
    status, headers, body = await raw_answer(
        listener.port,
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {len(batch)}\r\n\r\n".encode()
        + batch,
    )
    assert status.startswith(b"HTTP/1.1 405 ") and headers["allow"] == "POST", (status, body)
    assert headers["connection"] == "close"
