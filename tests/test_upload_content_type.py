"""A voice upload whose Content-Type holds a byte that is not UTF-8: after `multipart/` it was a 500
(aiohttp's refusal quotes the header, and the 400's words could not be encoded: an internal error, in the
v1 shape, not OpenAI's), and in the boundary a 400 in Python's words ("'utf-8' codec can't encode
character ..."). Both are OpenAI's 400, saying what is wrong, the header's bytes escaped."""

from __future__ import annotations

import pytest

from tests.raw_http import raw_exchange, refusal_of
from tests.timing import seconds


@pytest.mark.parametrize(
    ("content_type", "said"),
    [
        (
            b"multipart/\xff\xc2\x9b",
            "the multipart body cannot be read: boundary missed for Content-Type: multipart/\\xff\\x9b",
        ),
        (
            b"multipart/form-data; boundary=\xff\xc2\x9b",
            "the multipart body cannot be read: its Content-Type's boundary is not UTF-8",
        ),
    ],
)
async def test_a_content_type_that_is_not_utf_8_is_a_400(served, content_type, said):
    listener = await served()
    body = b"--x\r\n"
    request = (
        b"POST /v1/audio/voices HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: "
        + content_type
        + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )
    answer = await raw_exchange(listener.port, request, seconds(5))
    assert refusal_of(answer) == (400, "BadRequest", said), answer
