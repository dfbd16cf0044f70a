"""Request bodies aiohttp's parser refuses after their start (a malformed chunk, excess trailers), on a
real socket: answered 400 at once in the JSON error body, never after `--body-timeout`, never a
traceback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading

import aiohttp
import pytest
from aiohttp import http_parser, web_protocol

from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


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
    assert "b'" not in error and "ZZ" not in error and "XX" not in error  # (aiohttp quoted the bytes refused)
    assert "Traceback" not in caplog.text  # (aiohttp read on after the answer: "Unhandled exception")


@pytest.mark.parametrize(
    "rest",
    [b"ZZ\r\nhello\r\n0\r\n\r\n", b"0\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(200)) + b"\r\n"],
    ids=["chunk-size", "trailers"],
)
async def test_a_chunked_body_malformed_in_the_write_of_its_headers_is_a_400_at_once(served, rest):
    """The piece cut after the headers (`request_cutter.feed_in_cuts`), the request was queued before the
    parser's refusal of its body and its handler waited `--body-timeout` for the rest: a 408."""
    listener = await served(body_timeout=seconds(60))
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = await raw_exchange(listener.port, head + rest, seconds(10))
    assert status_lines(answer) == [b"400"], answer
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"].startswith("BadRequest: "), answer


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
    # A GET takes no body (test_unread_bodies_and_headers.py): refused at once, no stream runs over an unread body.
    assert answer.startswith(b"HTTP/1.1 400 ") and b"takes no body" in answer
    assert "Traceback" not in caplog.text and "Unhandled exception" not in caplog.text


@pytest.mark.parametrize(
    ("rest", "said"),
    [
        (b"ZZ\r\nhello\r\n0\r\n\r\n", "the chunked body's framing is not valid"),
        (b"5\r\nhelloXX0\r\n\r\n", "Chunk size mismatch: expected CRLF after chunk data"),
    ],
)
async def test_a_chunked_body_malformed_is_named_so_by_aiohttps_pure_python_parser(
    served, monkeypatch, rest, said
):
    """Where aiohttp runs its pure-Python parser (no wheel for the platform, AIOHTTP_NO_EXTENSIONS), a
    chunk framing error reaches the body's reader as a payload error, which was answered as a body that
    `does not match its Content-Encoding (identity)`: a coding the caller never sent."""
    monkeypatch.setattr(web_protocol, "HttpRequestParser", http_parser.HttpRequestParserPy)
    listener = await served(body_timeout=seconds(60))
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = await body_refused_after_its_start(listener, head + b'5\r\n{"tex\r\n', rest)
    assert refusal_of(answer) == (400, "BadRequest", f"the body is malformed: {said}"), answer


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
