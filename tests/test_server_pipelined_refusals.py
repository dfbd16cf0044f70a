"""A malformed request among others sent in one write, on a real socket: the requests before it are
answered, its refusal takes its own shape and version, and bodies holding blank lines are not cut into
requests (`request_cutter`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.raw_http import raw_exchange, status_lines
from tests.timing import seconds

HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def synth_request(wav: Path) -> bytes:
    body = json.dumps({"text": "hi.", "output_path": str(wav)}).encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    return head % len(body) + body


@pytest.mark.parametrize(
    ("valid", "statuses"),
    [
        (["health"], [b"200", b"400"]),
        (["health", "health"], [b"200", b"200", b"400"]),
        (["synth"], [b"200", b"400"]),
    ],
    ids=["one", "two", "with-a-body"],
)
async def test_requests_before_a_malformed_one_in_the_same_write_are_answered(
    served, tmp_path, valid, statuses
):
    """aiohttp's parser dropped the requests it had completed in a piece when a later one in that piece
    was malformed: a valid request and a malformed one sent together got the 400 alone, the first never
    run and its caller reading the 400 as its answer."""
    listener = await served()
    sent = b"".join(HEALTH if name == "health" else synth_request(tmp_path / "a.wav") for name in valid)
    answer = await raw_exchange(listener.port, sent + b"G\x00ET /jobs HTTP/1.1\r\n\r\n", seconds(5))
    assert status_lines(answer) == statuses, answer
    assert (tmp_path / "a.wav").exists() == ("synth" in valid)


async def test_a_malformed_request_after_others_in_a_write_is_refused_in_its_own_shape(served):
    """Its refusal took the shape and HTTP version of the first request in the write (the head kept is
    the first one's): under /v1/, v1's body, and HTTP/1.1 to an HTTP/1.0 request."""
    listener = await served()
    refused = b"GET /v1/models HTTP/1.0\r\nBad Header\r\n\r\n"
    answer = await raw_exchange(listener.port, HEALTH + refused, seconds(5))
    assert status_lines(answer) == [b"200", b"400"], answer
    refusal = answer[answer.rindex(b"HTTP/1.") :]
    assert refusal.startswith(b"HTTP/1.0 400 ") and b'{"error": {"message"' in refusal, answer


async def test_a_refusal_is_in_the_shape_of_the_refused_request_not_of_one_after_it(served):
    """The parser, refusing the first request of a write, refused each later one cut from it again, and
    the last cut picked the refusal's shape and version: an HTTP/1.1 legacy request's 400 came in
    HTTP/1.0 and OpenAI's body because a /v1/ HTTP/1.0 request followed it."""
    listener = await served()
    refused = b"G\x00ET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    answer = await raw_exchange(listener.port, refused + b"GET /v1/models HTTP/1.0\r\n\r\n", seconds(5))
    assert status_lines(answer) == [b"400"], answer
    assert answer.startswith(b"HTTP/1.1 400 ") and b'"status": "fail"' in answer, answer


async def test_bodies_holding_blank_lines_are_not_cut_into_requests(served, tmp_path):
    """`request_cutter` cuts each piece after every blank line, a body's too (JSON may hold `\\r\\n\\r\\n` between
    its tokens, a form's parts always do): the parser must read the cuts as one stream, so each body is
    whole and the requests after it are answered, sent in one write, by length or in chunks."""
    listener = await served()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"

    def body(name: str) -> bytes:
        return (
            json.dumps({"text": "hi.", "output_path": str(tmp_path / name)})
            .replace(", ", ",\r\n\r\n")
            .encode()
        )

    by_length = head + b"Content-Length: %d\r\n\r\n" % len(body("a.wav")) + body("a.wav")
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body("b.wav")), body("b.wav"))
    in_chunks = head + b"Transfer-Encoding: chunked\r\n\r\n" + chunked
    last = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    answer = await raw_exchange(listener.port, by_length + in_chunks + last, seconds(10))
    assert status_lines(answer) == [b"200", b"200", b"200"], answer
    assert (
        answer.count(b'"status": "ok"') == 3
        and (tmp_path / "a.wav").exists()
        and (tmp_path / "b.wav").exists()
    )
