"""An Expect header other than `100-continue` on a route without an Expect handler of the worker's own
(every GET, a path no route serves, the socket routes) was answered by aiohttp before any middleware: a
text/plain 417 quoting the value raw, and a 500 with a traceback in the log where the value held a byte
that is not UTF-8. It is the worker's 417, in the error shape of its path, and the connection closed."""

from __future__ import annotations

import logging

import pytest

from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds

PIPELINED = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"  # after the refusal: never answered


@pytest.mark.parametrize(
    ("target", "value", "shown"),
    [
        (b"/health", b"\xc2\x9b2J\xff\xfe", "'\\x9b2J\\udcff\\udcfe'"),
        (b"/health", b"fancy", "'fancy'"),
        (b"/no-such-path", b"\xff", "'\\udcff'"),
        (b"/v1/models", b"\xe2\x80\xa8x", "'\\u2028x'"),
        (b"/ws", b"\xff", "'\\udcff'"),
    ],
)
async def test_an_unknown_expect_is_the_workers_417_on_every_route(served, caplog, target, value, shown):
    listener = await served()
    caplog.set_level(logging.INFO)
    request = b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: " + value + b"\r\n\r\n" + PIPELINED
    answer = await raw_exchange(listener.port, request, seconds(5))
    assert status_lines(answer) == [b"417"], answer
    assert b"Connection: close" in answer.partition(b"\r\n\r\n")[0]
    assert refusal_of(answer) == (417, "BadRequest", f"unknown Expect: {shown}")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_100_continue_on_a_get_is_still_answered(served):
    listener = await served()
    request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-Continue\r\nConnection: close\r\n\r\n"
    answer = await raw_exchange(listener.port, request, seconds(5))
    assert status_lines(answer) == [b"100", b"200"], answer  # (aiohttp's own handler, as before)
