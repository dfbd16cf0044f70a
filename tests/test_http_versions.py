"""A request line naming an HTTP version the worker does not speak (HTTP/2.0 in an HTTP/1 request line,
0.9; 3.7 too with aiohttp's pure-Python parser, which llhttp refuses itself) was served, and answered
with `HTTP/2.0 200 OK`, a status line no HTTP/1 client parses: it is refused with 505 in HTTP/1.1, the
connection closed. A later HTTP/1.x (which that parser takes) is answered in HTTP/1.1 (RFC 9110 2.5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.raw_http import exchange, raw_exchange, status_lines
from tests.timing import seconds
from tests.worker_process import start_worker_process

PIPELINED = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"  # after the refusal: never answered


def assert_refused(answer: bytes, version: str) -> None:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 505 "), answer
    assert b"Connection: close" in head and status_lines(answer) == [b"505"]
    assert json.loads(body)["error"] == f"BadRequest: HTTP/{version} is not spoken here; send HTTP/1.1"


@pytest.mark.parametrize("version", ["2.0", "0.9"])
async def test_a_version_not_spoken_is_refused_in_http_1_1(served, version):
    listener = await served()
    request = f"GET /health HTTP/{version}\r\nHost: 127.0.0.1\r\n\r\n".encode() + PIPELINED
    assert_refused(await raw_exchange(listener.port, request, seconds(5)), version)


@pytest.mark.allow_blocking
def test_with_the_pure_python_parser_too_and_a_later_1_x_is_answered_in_1_1(tmp_path: Path):
    env = {**os.environ, "AIOHTTP_NO_EXTENSIONS": "1"}
    process = start_worker_process(tmp_path / "state", 0, 0.0, env=env)
    answers = []
    try:
        for version in ("3.7", "2.0", "1.2"):
            request = f"GET /health HTTP/{version}\r\nHost: 127.0.0.1\r\n\r\n".encode() + PIPELINED
            if version == "1.2":
                request = request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
            answers.append(exchange(process.port, request, seconds(10)))
    finally:
        process.terminate()
        process.wait(timeout=seconds(10))
    assert_refused(answers[0], "3.7")
    assert_refused(answers[1], "2.0")
    assert answers[2].startswith(b"HTTP/1.1 200 "), answers[2][:100]
