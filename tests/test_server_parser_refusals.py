"""Requests aiohttp's parser refuses, on a real socket: answered at once in the JSON error body, never a
traceback. (Bodies it refuses after their start: test_server_parser_refused_bodies.py; a malformed
request among others in one write: test_server_pipelined_refusals.py.)"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json

import pytest

from npu_worker.http_compat.metrics import METRICS_KEY
from tests.raw_http import raw_exchange, refusal_of
from tests.timing import seconds, until


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


TOKEN = b"Bearer s3cret-" + b"x" * 9000


@pytest.mark.parametrize(
    ("request_bytes", "status", "said"),
    [
        (
            b"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + TOKEN + b"\r\n\r\n",
            431,
            "header line",
        ),
        (b"GET /jobs?" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414, "request line"),
    ],
)
@pytest.mark.parametrize("path", ["/jobs", "/v1/models"])
async def test_a_line_over_aiohttps_bound_is_named_in_the_shape_of_its_path(
    served, request_bytes, status, said, path
):
    """One line over 8190 bytes was aiohttp's 400 quoting the line's first 100 bytes (a token among
    them), in v1's shape under /v1/ too, where OpenAI's SDKs read only theirs."""
    listener = await served()
    answer = await raw_exchange(listener.port, request_bytes.replace(b"/jobs", path.encode(), 1), seconds(5))
    got, name, message = refusal_of(answer)
    assert (got, name) == (status, "BadRequest") and f"{said} passes 8190 bytes" in message, answer
    assert (b'{"error": {"message"' in answer) == path.startswith("/v1/")
    assert b"s3cret" not in answer and b"aaaa" not in answer


@pytest.mark.parametrize("path", ["/jobs", "/v1/models"])
async def test_headers_refused_while_they_arrive_are_in_the_shape_of_their_path(served, path):
    """The 431 sent before headers that pass 64 KiB are complete was always in v1's shape."""
    listener = await served(header_timeout=30.0)
    pad = "".join(f"X-Pad-{n}: {'a' * 4000}\r\n" for n in range(17))
    answer = await raw_exchange(listener.port, f"GET {path} HTTP/1.1\r\n{pad}".encode(), seconds(5))
    got, name, message = refusal_of(answer)
    assert (got, name) == (431, "BadRequest") and "the request headers pass 65536 bytes" in message, answer
    assert (b'{"error": {"message"' in answer) == path.startswith("/v1/")


async def test_a_refusal_quotes_little_of_what_it_refuses(served):
    """aiohttp quoted an invalid method whole: an 8 KiB method, an answer of 9 KiB."""
    listener = await served()
    answer = await raw_exchange(listener.port, b"G" * 9000 + b" / HTTP/1.1\r\n\r\n", seconds(5))
    status, name, message = refusal_of(answer)
    assert (status, name) == (400, "BadRequest") and message.startswith("Invalid method encountered")
    assert len(message) < 400


async def sent_in_pieces(listener, pieces: list[bytes]) -> bytes:
    """Send each piece once the worker has received the one before (so each arrives on its own), then
    read the whole answer, up to the close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        sent = 0
        for piece in pieces:
            await until(functools.partial(received_all, listener, sent), "the piece before")
            writer.write(piece)
            sent += len(piece)
        async with asyncio.timeout(seconds(5)):
            return await reader.read()
    finally:
        writer.close()


def received_all(listener, sent: int) -> bool:
    return any(handler.bytes_received >= sent for handler in listener.guard.open)


LONG_HEADER = b"Host: 127.0.0.1\r\nAuthorization: Bearer s3cret-" + b"x" * 9000 + b"\r\n\r\n"


@pytest.mark.parametrize(
    "pieces",
    [
        [b"G", b"ET /v1/models HTTP/1.1\r\n" + LONG_HEADER],  # a first write of one byte
        [b"GET /v1/mod", b"els HTTP/1.1\r\n", LONG_HEADER],  # the request line in two writes
        [b"GET /v1/models?q=" + b"a" * 2000 + b" HTTP/1.1\r\n" + LONG_HEADER],  # past the 1 KiB kept
    ],
    ids=["first-byte-alone", "line-in-two-writes", "long-request-line"],
)
async def test_a_header_line_too_long_is_told_apart_from_the_request_line_however_it_arrives(served, pieces):
    """Only the first piece of a request was kept, and only its first KiB: a request line sent in two
    writes, or one over 1 KiB, followed by a header line over 8190 bytes, was a 414 that blamed the
    request line, and a path cut short in the first piece got v1's shape under /v1/."""
    listener = await served()
    answer = await sent_in_pieces(listener, pieces)
    got, name, message = refusal_of(answer)
    assert (got, name) == (431, "BadRequest") and "header line passes 8190 bytes" in message, answer
    assert b'{"error": {"message"' in answer and b"s3cret" not in answer


SECRET = b"s3cret-token"
HOST = b"Host: 127.0.0.1\r\n"


@pytest.mark.parametrize(
    ("request_bytes", "said"),
    [
        (b"G\x00ET /jobs?token=" + SECRET + b" HTTP/1.1\r\n" + HOST + b"\r\n", "Invalid method encountered"),
        (
            b"GET /jobs HTTP/1.1\r\n" + HOST + b"Authorization : Bearer " + SECRET + b"\r\n\r\n",
            "Invalid header token",
        ),
        (
            b"GET /jobs HTTP/1.1\r\n" + HOST + b"Authorization: Bearer " + SECRET + b"\x00\r\n\r\n",
            "Invalid header value char",
        ),
        (
            b"GET /jobs?token=" + SECRET + b" HTTP/9.9\r\n" + HOST + b"\r\n",
            "Bad status line: Invalid HTTP version",
        ),
        (
            b"GET /jobs?token=" + SECRET + b" HTXP/1.1\r\n" + HOST + b"\r\n",
            "Bad status line: Expected HTTP/, RTSP/ or ICE/",
        ),
        (b"GET /jobs?token=" + SECRET + b"\x01 HTTP/1.1\r\n" + HOST + b"\r\n", "Invalid char in url query"),
        (
            b"POST /jobs HTTP/1.1\r\n" + HOST + b"Content-Length: " + SECRET + b"\r\n\r\n",
            "Invalid character in Content-Length",
        ),
        (
            b"GET /jobs HTTP/1.1\r\n" + HOST + b"Authorization: Bearer\r\n " + SECRET + b"\r\n\r\n",
            "Unexpected whitespace after header value",
        ),
        (
            b"GET /jobs?token="
            + SECRET
            + b" HTTP/1.1\r\n"
            + HOST
            + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "Duplicate Content-Length",
        ),
        (
            b"GET /jobs?token=" + SECRET + b" HTTP/1.1\r\n" + HOST + b"X: 1\r\n" * 200 + b"\r\n",
            "Too many headers received",
        ),
        (
            b"POST /jobs?token=" + SECRET + b" HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: gzip\r\n\r\n",
            "Request has invalid `Transfer-Encoding`",
        ),
    ],
    ids=[
        "nul-in-method",
        "space-before-colon",
        "nul-in-value",
        "unknown-version",
        "not-http",
        "control-in-target",
        "bad-content-length",
        "folded-header",
        "two-content-lengths",
        "too-many-headers",
        "not-chunked",
    ],
)
@pytest.mark.parametrize("path", ["/jobs", "/v1/models"])
async def test_a_parser_refusal_says_what_was_wrong_without_quoting_the_request(
    served, request_bytes, said, path
):
    """aiohttp's 400 quoted the refused bytes, a ?token= or an Authorization header among them
    (`Invalid method encountered: b'G\\x00ET /jobs?token=T …'`): only what was wrong is said now, in the
    shape of the path the request names."""
    listener = await served()
    answer = await raw_exchange(listener.port, request_bytes.replace(b"/jobs", path.encode(), 1), seconds(5))
    assert SECRET not in answer and b"\\x" not in answer, answer
    assert refusal_of(answer) == (400, "BadRequest", said), answer
    assert (b'{"error": {"message"' in answer) == path.startswith("/v1/")


@pytest.mark.parametrize(
    ("request_line", "status_line"),
    [(b"G\x00ET / HTTP/1.1", b"HTTP/1.1 400 "), (b"GET / HTTP/1.0\r\nBad Header", b"HTTP/1.0 400 ")],
)
async def test_a_parser_refusal_answers_in_the_callers_http_version(served, request_line, status_line):
    """aiohttp answered every parser refusal as HTTP/1.0 (the placeholder request it makes for one):
    an HTTP/1.1 caller gets HTTP/1.1, with `Connection: close` since the connection ends."""
    listener = await served()
    answer = await raw_exchange(listener.port, request_line + b"\r\n\r\n", seconds(5))
    head = answer.partition(b"\r\n\r\n")[0]
    assert head.startswith(status_line), answer
    if status_line.startswith(b"HTTP/1.1"):
        assert b"\r\nConnection: close" in head, answer


async def test_a_line_too_long_is_counted_under_the_status_it_was_answered(served):
    """/metrics counted a header line over aiohttp's bound as a 400 while its caller got 431."""
    listener = await served()
    answer = await raw_exchange(
        listener.port, b"GET / HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", seconds(5)
    )
    assert answer.startswith(b"HTTP/1.1 431 "), answer
    registry = listener.runner.app[METRICS_KEY].registry
    labels = {"method": "UNKNOWN", "route": "unmatched"}
    assert registry.get_sample_value("npu_worker_http_requests_total", {**labels, "status": "431"}) == 1
    assert registry.get_sample_value("npu_worker_http_requests_total", {**labels, "status": "400"}) is None


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n",
        b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: zstd\r\nContent-Length: 2\r\n\r\n{}",
        b"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}",
    ],
)
async def test_a_parser_refusal_says_vary_origin_as_every_answer_does(served, request_bytes):
    """PROTOCOL (CORS): every answer says `Vary: Origin`. aiohttp's parser refusals never reach the app's
    on_response_prepare, so an invalid header or a `br`/`zstd` body's 400 went without it."""
    listener = await served()
    answer = await raw_exchange(listener.port, request_bytes, seconds(5))
    head = answer.partition(b"\r\n\r\n")[0].lower()
    assert head.split(b" ")[1] == b"400"
    assert b"\r\nvary: origin" in head
