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


@pytest.mark.parametrize(
    ("target", "token", "status", "name"),
    [
        (b"/no-such-path", None, 401, "Unauthorized"),  # no route leaked to a caller without the token
        (b"/jobs", None, 401, "Unauthorized"),
        (b"/no-such-path", b"s3cret", 417, "BadRequest"),
        (b"/health", None, 417, "BadRequest"),  # (needs no token)
    ],
)
async def test_with_a_token_the_token_is_asked_before_the_expect(served, target, token, status, name):
    """docs/protocol.md: an unknown `Expect` is a 417 after the token, origin and Host rules, so a caller
    without the token learns nothing of the routes from it (the docs said 417 on every path)."""
    listener = await served(token="s3cret")
    auth = b"" if token is None else b"Authorization: Bearer " + token + b"\r\n"
    head = b"Host: 127.0.0.1\r\nConnection: close\r\n" + auth + b"Expect: fancy\r\n"
    request = b"GET " + target + b" HTTP/1.1\r\n" + head + b"\r\n"
    answer = await raw_exchange(listener.port, request, seconds(5))
    assert status_lines(answer) == [str(status).encode()], answer
    assert refusal_of(answer)[:2] == (status, name)


async def test_a_401_to_an_unknown_expect_with_a_body_closes_and_says_so(served):
    """The body an unknown `Expect` declared is never asked for: the 401 said nothing of the close
    that followed it (the 417 says `Connection: close`); now it says so, and nothing after it is read."""
    listener = await served(token="s3cret")
    head = b"Host: 127.0.0.1\r\nContent-Length: 100000\r\nExpect: fancy\r\n"
    answer = await raw_exchange(listener.port, b"POST /synth HTTP/1.1\r\n" + head + b"\r\n", seconds(5))
    assert status_lines(answer) == [b"401"], answer
    assert b"Connection: close" in answer.partition(b"\r\n\r\n")[0]


async def test_an_unknown_expect_on_a_second_line_is_the_417(served):
    """`Expect: 100-continue` then `Expect: fancy`: only the first line was read, so `100 Continue` came
    and the request was served; every line is read now (RFC 9110 §10.1.1: an Expect not understood is
    a 417)."""
    listener = await served()
    head = b"Host: 127.0.0.1\r\nExpect: 100-continue\r\nExpect: fancy\r\n"
    answer = await raw_exchange(listener.port, b"GET /health HTTP/1.1\r\n" + head + b"\r\n", seconds(5))
    assert status_lines(answer) == [b"417"], answer
    assert refusal_of(answer) == (417, "BadRequest", "unknown Expect: 'fancy'")


@pytest.mark.parametrize(
    "expect",
    [
        b"Expect: 100-continue,",
        b"Expect: 100-continue, 100-Continue",
        b"Expect: 100-continue\r\nExpect: ,100-continue",
    ],
)
@pytest.mark.parametrize(
    ("method", "target", "body", "status"),
    [(b"GET", b"/health", b"", b"200"), (b"POST", b"/synth", b"{}", b"400")],
)
async def test_100_continue_as_a_list_is_100_continue(served, expect, method, target, body, status):
    """Expect is a list (RFC 9110 §10.1.1), its empty elements none (§5.6.1): `100-continue,` or the
    expectation twice asked for nothing unknown, but the line was compared whole, a 417."""
    listener = await served()
    head = b"Host: 127.0.0.1\r\nConnection: close\r\nContent-Length: %d\r\n" % len(body) + expect + b"\r\n"
    answer = await raw_exchange(
        listener.port, method + b" " + target + b" HTTP/1.1\r\n" + head + b"\r\n" + body, seconds(5)
    )
    assert status_lines(answer) == [b"100", status], answer


async def test_an_unknown_element_of_an_expect_list_is_the_417(served):
    listener = await served()
    head = b"Host: 127.0.0.1\r\nExpect: 100-continue, fancy\r\n"
    answer = await raw_exchange(listener.port, b"GET /health HTTP/1.1\r\n" + head + b"\r\n", seconds(5))
    assert refusal_of(answer) == (417, "BadRequest", "unknown Expect: '100-continue, fancy'")
