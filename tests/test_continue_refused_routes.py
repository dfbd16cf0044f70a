"""`Expect: 100-continue` on a path no route serves, or with a method its route does not take, was told
`100 Continue` (aiohttp's answer for a request no route takes) and the 404 or 405 came after it: the
caller sent its whole body to be refused. The refusal now comes instead of `100`, and the connection
closes with it (the body was never sent)."""

from __future__ import annotations

import pytest

from tests.raw_http import raw_exchange, refusal_of, status_lines
from tests.timing import seconds

PIPELINED = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"  # after the refusal: never answered


@pytest.mark.parametrize(
    ("line", "host", "status", "name"),
    [
        (b"POST /no-such-path", b"127.0.0.1", 404, "BadRequest"),
        (b"POST /v1/no-such-path", b"127.0.0.1", 404, "BadRequest"),
        (b"PUT /synth", b"127.0.0.1", 405, "BadRequest"),
        (b"DELETE /health", b"127.0.0.1", 405, "BadRequest"),
        (b"PATCH /v1/audio/speech", b"127.0.0.1", 405, "BadRequest"),
        (b"POST /no-such-path", b"rebound.example", 403, "OriginNotAllowed"),
    ],
)
async def test_a_refused_route_answers_instead_of_100_continue(served, line, host, status, name):
    listener = await served()
    head = line + b" HTTP/1.1\r\nHost: " + host + b"\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
    answer = await raw_exchange(listener.port, head + PIPELINED, seconds(5))  # (no body: it waits for 100)
    assert status_lines(answer) == [str(status).encode()], answer
    assert b"Connection: close" in answer.partition(b"\r\n\r\n")[0]
    assert refusal_of(answer)[:2] == (status, name)


async def test_a_route_that_takes_the_request_still_says_100_continue(served, tmp_path):
    listener = await served()
    body = b'{"text": "a.", "output_path": "%s"}' % str(tmp_path / "a.wav").encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n"
    head += b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    answer = await raw_exchange(listener.port, head + body, seconds(30))
    assert status_lines(answer) == [b"100", b"200"], answer


async def test_a_refused_request_with_no_body_keeps_its_connection(served):
    listener = await served()
    head = b"GET /no-such-path HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n\r\n"
    health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    answer = await raw_exchange(listener.port, head + health, seconds(5))
    assert status_lines(answer) == [b"404", b"200"], answer


@pytest.mark.parametrize(
    ("line", "token", "status", "name"),
    [
        (b"GET /health", None, 400, "BadRequest"),
        (b"GET /jobs", "sekrit-token-1", 401, "Unauthorized"),
        (b"DELETE /jobs/no-such-job", None, 400, "BadRequest"),
        (b"GET /v1/models", None, 400, "BadRequest"),
    ],
)
async def test_a_body_a_route_never_reads_is_refused_instead_of_100_continue(
    served, line, token, status, name
):
    """A GET (any method but POST) that declared a body was told `100 Continue` by aiohttp's default
    handler, sent its body, and was then refused (`a GET request takes no body`, or 401 without the
    token). The refusal comes instead of `100`, the connection closed."""
    listener = await served(token=token)
    head = line + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
    answer = await raw_exchange(listener.port, head + PIPELINED, seconds(5))  # (no body: it waits for 100)
    assert status_lines(answer) == [str(status).encode()], answer
    assert b"Connection: close" in answer.partition(b"\r\n\r\n")[0]
    assert refusal_of(answer)[:2] == (status, name)


async def test_a_get_with_no_body_is_still_answered(served):
    listener = await served()
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    answer = await raw_exchange(listener.port, head, seconds(5))
    assert status_lines(answer)[-1:] == [b"200"], answer
