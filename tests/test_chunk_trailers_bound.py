"""The bound on a chunked body's trailers, which the 64 KiB cap on request headers does not count (the
connection guard sees headers only up to their blank line; a walk of the chunk framing was left out):
aiohttp's parser takes at most 129 header and trailer fields together (128 headers alone), each trailer
line at most 8 192 bytes, so a request's trailers stay under 1 MiB. A guard on that bound, at its edges
(docs/protocol.md quotes these figures): an aiohttp that raised it would let a caller hold more per
request, unseen (the figures were 128 fields and 8 190 bytes, which the cases around them did not pin)."""

from __future__ import annotations

import pytest

from tests.raw_http import raw_exchange, refusal_of
from tests.timing import seconds

HEAD = (
    b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
)  # 4 fields
BODY = b'{"text": "", "output_path": "/tmp/x.wav"}'  # read whole, then refused for its empty text


def chunked_with_trailers(count: int, size: int) -> bytes:
    trailers = b"".join(b"X-T%d: " % i + b"a" * size + b"\r\n" for i in range(count))
    return HEAD + b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n" + trailers + b"\r\n"


@pytest.mark.parametrize(
    ("count", "size", "said"),
    [
        (120, 8100, "EmptyText: text is empty"),  # 972 000 bytes of trailers read: the body reached the app
        (125, 10, "EmptyText: text is empty"),  # 4 headers and 125 trailers: 129 fields
        (126, 10, "BadRequest: the body is malformed: Too many headers received"),
        (1, 8186, "EmptyText: text is empty"),  # `X-T0: ` and 8 186 bytes: a line of 8 192
        (1, 8187, "BadRequest: the body is malformed: Got more than 8190 bytes when reading"),
    ],
)
async def test_a_chunked_bodys_trailers_are_bounded_by_the_parser(served, count, size, said):
    listener = await served()
    answer = await raw_exchange(listener.port, chunked_with_trailers(count, size), seconds(20))
    status, name, message = refusal_of(answer)
    assert (status, f"{name}: {message}") == (400, said), answer[:200]
