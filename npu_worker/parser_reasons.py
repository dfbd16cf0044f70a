"""Why aiohttp's HTTP parser refused a request, in words that never quote what the caller sent.

aiohttp's reasons quote the refused bytes (`Invalid method encountered: b'G\\x00ET /jobs?token=T …'`,
`Invalid header token: b'Authorization : Bearer T'`), a token among them, and its pure-Python parser
quotes a chunk line or a target bare. The caller's answer and the log keep only what aiohttp says about
the fault: llhttp's description (a fixed text of the C library), one of aiohttp's own fixed sentences,
else a sentence per kind of fault. Pure code.
"""

from __future__ import annotations

import re

from aiohttp.http_exceptions import (
    BadHttpMethod,
    BadStatusLine,
    ContentEncodingError,
    ContentLengthError,
    InvalidHeader,
    InvalidURLError,
    LineTooLong,
    PayloadEncodingError,
    TransferEncodingError,
)

# aiohttp's own sentences that quote nothing of the request (a header name here is one of its fixed
# list of headers that may come once).
_OWN_SENTENCES = re.compile(
    r"Too many (?:headers|trailers) received"
    r"|Missing 'Host' header in request\."
    r"|Duplicate '[A-Za-z-]{1,40}' header found\."
    r"|Request has invalid `Transfer-Encoding`"
    r"|Transfer-Encoding can't be present with Content-Length"
    r"|Data after `Connection: close`"
    r"|Bad (?:line|chunk-size line|trailer line) ending, expected CRLF"
    r"|Chunk size mismatch: expected CRLF after chunk data"
    r"|Not enough data to satisfy transfer length header\."
    r"|Not enough data to satisfy content length header \(received \d+ of \d+ bytes\)\."
    r"|Received HTTPS traffic on an HTTP port"
)
# llhttp's: "<what>:\n\n  b'<the bytes>'\n  ^" ("Bad status line:\n  " before it): its what is a
# fixed text of the C library (aiohttp's own "Invalid HTTP header: b'…'" too). No quote may come
# before it: the pure-Python parser quotes a request line as 'GET …', and a target has no space.
_DESCRIBED = re.compile(r"([A-Z](?:[A-Za-z0-9 _,/:`-]|n't){0,200}?): b['\"]")
_UNDECODABLE = re.compile(r"content-encoding: \w+ \((\w+)\)")  # aiohttp's refusal of br/zstd it cannot decode
# The kind of fault where aiohttp's words quote the request (most specific first).
_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (LineTooLong, "a line of the request is too long"),
    (InvalidURLError, "the request target is not a valid URL"),
    (InvalidHeader, "a request header is not valid"),
    (BadHttpMethod, "the request method is not valid"),
    (BadStatusLine, "the request line is not valid"),
    (ContentLengthError, "the body is shorter than its Content-Length"),
    (TransferEncodingError, "the chunked body's framing is not valid"),
    (ContentEncodingError, "the body does not match its Content-Encoding"),
    (PayloadEncodingError, "the body's framing is not valid"),
)


def parser_reason(exc: BaseException | None, message: str | None = None) -> str:
    """What was wrong with a request aiohttp's parser refused (`exc`, or its `message` where aiohttp
    handed that instead), without any of the request's bytes."""
    text = message or (str(getattr(exc, "message", "") or exc) if exc is not None else "")
    said = " ".join(text.split())
    if (described := _DESCRIBED.match(said)) and not isinstance(exc, TransferEncodingError):
        return described[1]  # (the pure-Python parser's chunk errors quote a chunk line bare)
    if isinstance(exc, ContentEncodingError) and (coding := _UNDECODABLE.search(said)):
        # aiohttp's words ("Please install `Brotli`") are advice for the server's owner, not the caller
        return f"Content-Encoding {coding[1]!r} is not supported: send the body as is, gzip or deflate"
    if _OWN_SENTENCES.fullmatch(said):
        return said
    for kind, words in _KINDS:
        if isinstance(exc, kind):
            return words
    return "the request is malformed"
