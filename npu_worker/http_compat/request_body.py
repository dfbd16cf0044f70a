"""Reading a request's body: its framing and coding checked before a byte is read, bounded by
`--max-body-bytes` and `--body-timeout`, each piece held in the worker's body budget as it arrives.

Apart from the views (`routes.py`), which decode the bytes: every surface that takes a body (v1, the
OpenAI speech routes, the voice upload) reads it here."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError, HttpProcessingError

from ..app_keys import BODY_BUDGET_KEY, SETTINGS_KEY
from ..body_budget import BodyHold
from ..parser_reasons import parser_reason
from ..protocol import BadRequest, BodyBudgetFull, BodyTooLarge, RequestTimeout, WorkerError
from .errors import CLOSE_AFTER_KEY
from .hang_up import caller_gone

DECODED_ENCODINGS = frozenset({"identity", "gzip", "deflate"})  # what aiohttp decodes without extras
PIECE_OVERHEAD = sys.getsizeof(b"") + 8  # a body piece's object and list slot: a trickle's 1-byte pieces


def check_framing(request: web.Request) -> None:
    """Refuse at once a body framed in a way aiohttp would pass on undecoded (a transfer coding other
    than chunked: `gzip, chunked` reached the handler still compressed)."""
    codings = [
        c.strip().lower() for c in request.headers.get("Transfer-Encoding", "").split(",") if c.strip()
    ]
    if any(coding != "chunked" for coding in codings):
        request[CLOSE_AFTER_KEY] = True  # the body stays unread
        raise BadRequest(f"Transfer-Encoding {', '.join(codings)[:60]!r} is not supported: use chunked")


@contextlib.asynccontextmanager
async def body_deadline(request: web.Request) -> AsyncIterator[None]:
    """Bound the reading of a request's body by `--body-timeout`: past it, a 408 that closes the
    connection. Every handler that reads a body reads it under this (the header deadline stops at the
    headers, so nothing else limits a body that trickles).

    A connection closed under a read (the guard's eviction of a slow body, the shutdown: aiohttp's
    `force_close` drops the transport before the payload hears of it) makes aiohttp's payload raise
    `RuntimeError("Connection closed.")`: that is the caller gone, a ConnectionResetError (`left_early`).
    A body whose framing its parser refused (`connection_guard.GuardedHandler`) is never read on: the answer
    closes the connection."""
    check_framing(request)
    limit = request.app[SETTINGS_KEY].body_timeout
    try:
        async with asyncio.timeout(limit or None):
            yield
    except TimeoutError:
        request[CLOSE_AFTER_KEY] = True
        raise RequestTimeout(f"the body did not arrive within {limit} s") from None
    except RuntimeError:
        if not caller_gone(request):
            raise
        raise ConnectionResetError("the connection was closed while its body was read") from None
    finally:
        if request.content.exception() is not None:  # (a refused framing) the rest is never read:
            request.content.feed_eof()  # aiohttp would read on after the answer, and log the error
            request[CLOSE_AFTER_KEY] = True


@contextlib.asynccontextmanager
async def held_body(request: web.Request) -> AsyncIterator[BodyHold]:
    """The body's share of the worker's budget for bodies being received (`body_budget.py`): its
    reader `grow`s it by each piece read. A body dropped to make room for others, or refused for want
    of room, is never read on (its reader is refused with `BodyBudgetFull`; the answer closes the
    connection, as `body_deadline` closes one whose body is left unread)."""

    def refuse(error: WorkerError) -> None:
        if request.content.exception() is None:
            request.content.set_exception(error)  # its reader, waiting for more, is refused at once

    hold = request.app[BODY_BUDGET_KEY].hold(refuse)
    try:
        yield hold
    except BodyBudgetFull as error:
        refuse(error)
        raise
    finally:
        hold.release()


async def _read_held(request: web.Request, limit: int) -> bytes:
    """`request.read()`, each piece held in the body budget as it arrives (aiohttp's own read has no
    bound across requests); a body given up is freed at once."""
    pieces: list[bytes] = []  # joined once at the end: a growing buffer's reallocations left holes
    size = 0
    request.content.set_read_chunk_size(limit)  # as aiohttp's read does: inflated in larger pieces
    async with held_body(request) as hold:
        try:
            while piece := await request.content.readany():
                size += len(piece)
                if size > limit:
                    raise web.HTTPRequestEntityTooLarge(max_size=limit, actual_size=size)
                hold.grow(len(piece) + PIECE_OVERHEAD)
                pieces.append(piece)
        except BaseException:
            # Freed now: the error aiohttp keeps on the stream (and raises again) holds this frame in
            # its traceback, a cycle only the next full collection frees (`hang_up.left_early`).
            pieces.clear()
            raise
        return b"".join(pieces)


async def read_body(request: web.Request) -> bytes:
    """The body's bytes (decoded by a view into its Struct); a body that does not match its
    Content-Encoding is the caller's mistake.

    After such a body the connection's framing cannot be trusted: the answer closes it (and the rest of
    the body is not read, which aiohttp would otherwise try and log as an unhandled exception).
    """
    limit = request.app[SETTINGS_KEY].max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        request[CLOSE_AFTER_KEY] = True  # refused before a byte is read, not after waiting for them
        raise BodyTooLarge(f"the body is {request.content_length} bytes; the limit is {limit}")
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in DECODED_ENCODINGS:  # aiohttp passes a coding it does not know through undecoded
        request[CLOSE_AFTER_KEY] = True  # the body stays unread
        raise BadRequest(
            f"Content-Encoding {encoding[:40]!r} is not supported: send the body as is, gzip or deflate"
        )
    try:
        async with body_deadline(request):
            raw = await _read_held(request, limit)
    except web.HTTPRequestEntityTooLarge:
        if encoding != "identity":
            # Past the limit once decoded (a small gzip body can hold gigabytes): the rest is not
            # read. aiohttp would read it on for up to 10 s to reuse the connection, inflating it on
            # the event loop (a 200 KB gzip body held /health for a second); a plain body it reads
            # on cheaply, and the caller then surely gets the answer (no reset for unread bytes).
            request.content.feed_eof()
            request[CLOSE_AFTER_KEY] = True
        raise BodyTooLarge(f"the body exceeds {limit} bytes") from None
    except web.RequestPayloadError as exc:
        request.content.feed_eof()
        request[CLOSE_AFTER_KEY] = True
        if isinstance(exc.__cause__, HttpProcessingError) and not isinstance(
            exc.__cause__, ContentEncodingError
        ):
            # its framing, as aiohttp's pure-Python parser reports a chunk error (the C one: below)
            raise BadRequest(f"the body is malformed: {parser_reason(exc.__cause__)}") from None
        encoding = request.headers.get("Content-Encoding", "identity")
        raise BadRequest(f"the body does not match its Content-Encoding ({encoding})") from None
    except HttpProcessingError as exc:  # its framing (connection_guard.GuardedHandler), in the parser's words
        raise BadRequest(f"the body is malformed: {parser_reason(exc)}") from None
    return raw
