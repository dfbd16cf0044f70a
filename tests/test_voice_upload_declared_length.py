"""A voice upload or inline `ref_audio` whose declared length is over its cap: refused on the header."""

from __future__ import annotations

import asyncio

import pytest

from tests.raw_http import refusal_of
from tests.timing import seconds

HUGE = 10 * 1024**3


async def first_answer(port: int, data: bytes, within: float) -> bytes:
    """`data` sent, and the worker's first answer (its head and the body its Content-Length gives) read
    within `within` s: not waiting for the close, which the worker puts off while the body is unread."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    try:
        async with asyncio.timeout(within):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            return head + await reader.readexactly(length)
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v1/audio/voices", "multipart/form-data; boundary=b"),
        ("/v1/audio/speech", "application/json"),
    ],
)
async def test_a_body_declared_over_the_cap_is_refused_before_a_byte_of_it_arrives(
    served, path, content_type
):
    """Only the headers are sent: the upload waited for the body until `--body-timeout` (a 408 a minute
    later, the connection held meanwhile), not the 413 its Content-Length already called for."""
    listener = await served(body_timeout=60.0)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {HUGE}\r\n\r\n"
    )
    answer = await first_answer(listener.port, head.encode(), seconds(1))
    status, code, message = refusal_of(answer)
    assert (status, code) == (413, "BodyTooLarge"), answer[:400]
    assert str(HUGE) in message, message


@pytest.mark.parametrize("length", [HUGE, 50 * 1024**2])
async def test_an_upload_declared_over_the_cap_is_refused_instead_of_100_continue(served, length):
    """A caller that waits for `100 Continue` before its body: the upload's cap was applied only in the
    handler, after the worker had told it to send 50 MB (then closed on it, the body unread); 10 GiB,
    past the body budget, was a 503 BodyBudgetFull, "send it again shortly"."""
    listener = await served(body_timeout=60.0)
    head = (
        "POST /v1/audio/voices HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\n"
        f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
    )
    answer = await first_answer(listener.port, head.encode(), seconds(1))
    status, code, message = refusal_of(answer)
    assert (status, code) == (413, "BodyTooLarge"), answer[:400]
    assert "--voice-max-bytes" in message, message
