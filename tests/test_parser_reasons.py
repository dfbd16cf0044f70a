"""parser_reasons: aiohttp's reasons for refusing a request, without the bytes it quotes, from both of
its parsers (the C one serves here; the pure-Python one where no wheel fits, or AIOHTTP_NO_EXTENSIONS)."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import http_parser
from aiohttp.http_exceptions import BadHttpMessage, ContentEncodingError

from npu_worker.parser_reasons import parser_reason

SECRET = b"s3cret"
PARSERS = [http_parser.HttpRequestParserPy]
if hasattr(http_parser, "HttpRequestParserC"):
    PARSERS.append(http_parser.HttpRequestParserC)

HOSTILE = [
    b"G\x00ET /?token=s3cret HTTP/1.1\r\nHost: h\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: h\r\nAuthorization : Bearer s3cret\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer s3cret\x00\r\n\r\n",
    b"GET /?token=s3cret HTXP/1.1\r\nHost: h\r\n\r\n",
    b"GET /?token=s3cret\x01 HTTP/1.1\r\nHost: h\r\n\r\n",
    b"GET http:/?token=s3cret HTTP/1.1\r\nHost: h\r\n\r\n",
    b"CONNECT s3cret:x:y HTTP/1.1\r\nHost: h\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: s3cret\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\ns3cret: b'x\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;s3cret\nx\r\n",
    b"GET / HTTP/1.1\r\nHost: h\r\nX: " + SECRET * 2000 + b"\r\n\r\n",
]


async def refused(parser_class: type, data: bytes) -> BaseException:
    """The error the parser gives `data`: raised, or set on the body it started."""

    class Protocol:
        def __getattr__(self, name: str):
            return lambda *args, **kwargs: None

    parser = parser_class(
        Protocol(), asyncio.get_running_loop(), 2**16, max_line_size=8190, max_field_size=8190
    )
    try:
        messages, _, _ = parser.feed_data(data)
    except BadHttpMessage as exc:
        return exc
    for _, body in messages:
        if body.exception() is not None:
            return body.exception()
    raise AssertionError(f"{parser_class.__name__} took {data!r}")


@pytest.mark.parametrize("parser_class", PARSERS)
@pytest.mark.parametrize("data", HOSTILE)
async def test_no_reason_quotes_the_request(parser_class, data):
    exc = await refused(parser_class, data)
    reason = parser_reason(exc)
    assert reason and not any(quoted in reason for quoted in ("s3cret", "b'", "\\x", "G\x00")), (reason, exc)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("Invalid header token:\n\n  b'Authorization : Bearer s3cret'\n    ^", "Invalid header token"),
        (
            "Bad status line:\n  Invalid HTTP version:\n\n  b'GET / HTTP/9.9'\n  ^",
            "Bad status line: Invalid HTTP version",
        ),
        ("Too many headers received", "Too many headers received"),
        ("Duplicate 'Host' header found.", "Duplicate 'Host' header found."),
        (
            "Bad status line 'GET /?token=s3cret: b' x'",
            "the request is malformed",
        ),  # (a quote first: not llhttp's)
        ("s3cret", "the request is malformed"),
    ],
)
def test_what_is_kept_of_aiohttps_words(message, reason):
    assert parser_reason(BadHttpMessage(message)) == reason


def test_an_undecodable_coding_is_named_without_the_install_advice():
    exc = ContentEncodingError("Can not decode content-encoding: brotli (br). Please install `Brotli`")
    assert (
        parser_reason(exc) == "Content-Encoding 'br' is not supported: send the body as is, gzip or deflate"
    )
