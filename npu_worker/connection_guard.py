"""The bounds a slow or greedy client cannot get around, on every connection `server.listen` serves.

aiohttp waits for request headers without a deadline and accepts every connection, so a few hundred
sockets that send one header byte a second hold every file descriptor and lock other clients out
(slowloris). Here a connection must finish its request headers within `header_timeout` seconds while
it is really waiting for them: from the connection, and on a kept-alive connection from the end of the
previous response, until the request reaches the app. Once it has, only `--body-timeout` bounds its body
(where it is read: `read_body`, the voice upload) and nothing but the client bounds the response: a
long NDJSON stream, a WebSocket or a slowly read file is never cut here. At most `max_connections` are
open: a new one over the cap evicts one closing after its answer (`lingering_close`), else the one that has
waited longest for its headers, else the WebSocket idle longest (open, nothing running on it:
`ws_server/standing.py` closes it with 1013, try again later), else the request whose body has been
arriving longest (for at least SLOW_BODY_SECONDS: sockets that send their headers at once and then trickle
a body held every place for `--body-timeout` each, again and again), so a client that sends a whole request
at once (a health check) gets in unless every connection is really in use (a request running, or its body
coming promptly). A reply its caller leaves unread (a closed receive window) for UNREAD_SECONDS ends the
connection. Parser-level refusals get the JSON error body, in the caller's HTTP version, quoting nothing of
the request, after the requests sent before them; a caller's FIN after whole requests leaves them answered.

The two moments come from public aiohttp hooks, not from its parser's private state: the request
reaching the app is the outermost middleware (`guard_middleware`), the response being finished is the
access logger (`server.RedactingAccessLogger`), which aiohttp calls once the last byte is written
(`AbstractAccessLogger.log`).

Its parts, a module each: `open_connections` (the table of open connections: the cap, its evictions,
the header deadlines), `request_head` (a refusal's shape, version, 414 or 431), `request_cutter` (the
requests before a malformed one are answered), `refused_bodies` (a body the parser refused ends at once),
`half_close` (a caller's FIN after whole requests), `lingering_close` (an answer that closes a
connection whose body still arrives), `expect_lines` (an `Expect` aiohttp would answer itself),
`unread_replies` (a reply left unread ends the connection).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web, web_protocol
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http import HttpVersion, RawRequestMessage
from aiohttp.http_exceptions import LineTooLong
from aiohttp.streams import StreamReader
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestHandler, _ErrInfo

from .expect_lines import read_expect
from .half_close import requests_whole
from .lingering_close import LingeringClose
from .open_connections import ConnectionGuard
from .parser_reasons import parser_reason
from .protocol import BadRequest, WorkerError
from .refused_bodies import refuse_unfinished_bodies
from .request_cutter import feed_in_cuts
from .request_head import RequestHead
from .unread_replies import drop_when_unread

log = logging.getLogger(__name__)
# A request's header lines together; browsers send a few KiB (`http_compat/errors.py` refuses a request
# that has more). aiohttp takes 128 lines of 8 KiB and holds each whole line until the request is
# complete: a connection that sent them and never ended its headers held them until the header deadline.
# A chunked body's trailers are not counted here (only bytes up to the headers' blank line are): aiohttp
# takes at most 129 header and trailer fields together (128 headers alone), each trailer line at most
# 8 192 bytes, under 1 MiB a request (tests/test_chunk_trailers_bound.py); counting them would need a
# walk of the chunk framing.
MAX_HEADER_BYTES = 64 * 1024


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The request's headers are in: its connection is no longer subject to the header deadline."""
    protocol = request.protocol
    if isinstance(protocol, GuardedHandler):
        protocol.request_arrived(request.content)
    return await handler(request)


class GuardedHandler(RequestHandler):
    """aiohttp's connection handler, reporting to the guard when it waits for headers and when not."""

    def __init__(self, manager: web.Server, *, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.guard = guard
        self._refused = False
        self.bytes_received = 0  # on this connection so far (a WebSocket's message deadline reads it)
        self._header_bytes = 0  # received for headers not yet complete; -1: their end was seen
        self._header_tail = b""  # the last bytes of them (an end split across two pieces)
        self._head = RequestHead()  # their start: a refusal's shape, version, 414 or 431
        self._unread_body: StreamReader | None = None  # the answered request's, still arriving (drained)
        self.on_received: Callable[[], object] | None = None  # told after each piece (the body budget)
        self.peer_ended = False  # the caller ended its sending side after whole requests (`eof_received`)
        self.on_gone: Callable[[], object] | None = None  # told once the caller has gone (`tell_gone`)
        self._serving_body: StreamReader | None = None  # the request's being answered (`request_made`)
        # the answered request's (`answer_written`), until the next request is made (`request_made`)
        self._answered_body: StreamReader | None = None
        # the HTTP version the request being answered named, where it is none this server speaks
        # (HTTP/2.0, 3.7, 0.9 in an HTTP/1 request line): it is answered in HTTP/1.1, refused (505)
        self.unspoken_version: HttpVersion | None = None
        # the Expect header the request being answered sent, where it is not `100-continue` (`request_made`)
        self.unknown_expect: str | None = None
        self._parser_refused = False  # the answer is a refusal of what the parser read (`handle_error`)
        self._lingering: LingeringClose | None = None  # closing after an answer, the caller still sending
        self._answered_at: float | None = None  # loop time of the last answer written (`answer_written`)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._refused = not self.guard.admit(self)
        if self._refused:
            transport.close()
            return
        super().connection_made(transport)
        drop_when_unread(transport)
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        if self._lingering is not None:  # dropped as it comes: nothing parsed, nothing held
            self._lingering.received()
            return
        self.bytes_received += len(data)
        draining = self._unread_body is not None  # (not ended before this piece: the piece is its body)
        if not draining and self._header_bytes >= 0 and self in self.guard.waiting:
            self._head.keep(data)
        feed_in_cuts(data, self._feed)  # (`request_cutter`: the requests before a fault are answered)
        queued = getattr(self, "_messages", None)  # (`queued_refusal` inline: 5 calls a `/synth`, stop 63)
        if queued and isinstance(queued[-1][0], _ErrInfo):  # (`refused_bodies`: readers answer the 400 now)
            refuse_unfinished_bodies(queued, self._serving_body, self.guard.body_of(self))
        if draining:
            if self._unread_body is not None and self._unread_body.is_eof():
                self._unread_body = None  # (what follows the body's end in this piece goes uncounted)
        elif self._header_bytes >= 0 and self in self.guard.waiting:
            self._count_header_bytes(data)
        if self.on_received is not None:
            self.on_received()

    def _feed(self, data: bytes, start: int, end: int) -> bool:
        """aiohttp parses data[start:end]; True where it refused (a refusal is queued last). Where it
        refuses a request that followed others in the piece, that request's first bytes pick its
        refusal's shape and HTTP version (`RequestHead.refused_at`)."""
        super().data_received(data[start:end] if start or end < len(data) else data)
        queued = getattr(self, "_messages", None)
        refused = isinstance(queued[-1][0], _ErrInfo) if queued else False  # (as `queued_refusal`)
        if refused and start:
            self._head.refused_at(data, start)
        return refused

    def _refusal_answer(self, error: WorkerError, status: int) -> web.Response:
        """The refusal of the request whose headers are arriving, in the shape its path has; it closes
        the connection."""
        response = self.guard.refusal(self._head.path(), error, status)
        response.force_close()
        self._parser_refused = True
        return response

    def _count_header_bytes(self, data: bytes) -> None:
        """Headers still arriving past MAX_HEADER_BYTES: refused now, not at the header deadline. Only
        until the blank line that ends them (a body sent with them is not counted)."""
        joint = self._header_tail + data[:3]  # (an end split across two pieces; no copy of the piece)
        # (`in` four times, not `any` over a generator: two calls on the loop a request, stop 63)
        ended = b"\r\n\r\n" in data or b"\n\n" in data or b"\r\n\r\n" in joint or b"\n\n" in joint
        # (a parsed request waiting for its turn, pipelined: what follows it may be its body)
        if ended or getattr(self, "_messages", None):
            self._header_bytes = -1  # (a request that passes the bound: http_compat/errors.py)
            return
        self._header_tail = (self._header_tail + data)[-3:] if len(data) < 3 else data[-3:]
        self._header_bytes += len(data)
        if self._header_bytes > MAX_HEADER_BYTES:
            self._refuse_headers()

    def _await_headers(self) -> None:
        # An answer sent before its body was read (a 401, a 404): aiohttp drains the body then, for
        # LINGER_SECONDS, and it was counted as the next request's headers (a stray 431, a reset).
        body = self.guard.body_of(self)
        self._unread_body = body if body is not None and not body.is_eof() else None
        self._header_bytes, self._header_tail = 0, b""
        self._head.restart()
        self.guard.await_headers(self)

    def _refuse_headers(self) -> None:
        """431 in the error body of its path's shape (OpenAI's under /v1/), and the connection closed,
        while the headers still arrive."""
        log.debug("refused request headers past %d bytes", MAX_HEADER_BYTES)
        if self.guard.on_unparsable is not None:
            self.guard.on_unparsable(431)
        error = BadRequest(f"the request headers pass {MAX_HEADER_BYTES} bytes; that is the limit")
        self.guard.headers_done(self)
        if self.transport is not None:
            self.transport.write(raw_answer(self._refusal_answer(error, 431)))
        if not self._linger():
            self.force_close()  # (it could not linger)

    def request_arrived(self, body: StreamReader) -> None:
        """A request's headers are parsed and it has reached the app (see `guard_middleware`)."""
        self.guard.request_arrived(self, body)

    def response_finished(self) -> None:
        """A response is finished: a kept-alive connection now waits for the next request's headers; one
        whose caller ended its sending side closes once nothing it sent is left to answer."""
        self._serving_body = None
        if self.peer_ended and not getattr(self, "_messages", None):
            self.close()
        self._await_headers()

    def answer_written(self, *, closes: bool = False, body_unread: bool = False) -> None:
        """An answer is written whole (the access logger): its request's body is only drained from now
        on (`connection_lost`); one that `closes` with the body unread, or a parser refusal, lingers."""
        self._answered_body = self._serving_body
        if body_unread:  # (aiohttp drains it before `close`: the linger's bound counts from now)
            self._answered_at = self._loop.time()
        if closes and (body_unread or self._parser_refused):
            self._linger()

    def _linger(self, answered_at: float | None = None) -> bool:
        """Close after the answer without a reset (`lingering_close`), in place of aiohttp's close:
        its task ends now and reads no more of this connection; the guard counts it, the first it evicts
        (`ConnectionGuard.linger`)."""
        transport = self.transport
        if self._lingering or not isinstance(transport, asyncio.Transport) or transport.is_closing():
            return self._lingering is not None
        for body in (self._serving_body, self._answered_body):
            if body is not None and not body.is_eof():
                body.feed_eof()  # (aiohttp's own drain of it ends at once)
        self._serving_body = self._answered_body = self._unread_body = None
        self.transport = None  # aiohttp's close would reset the caller (bytes unread): it has none now
        super().force_close()
        self.guard.linger(self)
        self._lingering = LingeringClose(transport, answered_at)
        return True

    def close(self) -> None:
        """aiohttp's close once its drain of an answered body (a 401 kept alive) ran out lingers too,
        its bound counted from the answer (it was 1 s of drain, then 5 s more)."""
        if self._answered_body is not None and not self._answered_body.is_eof():
            self._linger(self._answered_at)
        super().close()

    def force_close(self) -> None:
        """A lingering close ends now (the shutdown, an eviction, the header deadline)."""
        if self._lingering is not None:
            self._lingering.end()
        super().force_close()

    async def _drain_helper(self) -> None:
        """Wait until the transport takes writes again. aiohttp shares one waiter among every writer of
        the connection and does not shield it: a send given up on (a WebSocket frame past its send
        deadline) cancelled it, and each later wait on it, the close frame's, was cancelled at once (the
        close never went out: a bare 1006). Each writer here waits on it shielded. (aiohttp's private
        method, called by its writers; `_paused` and `_drain_waiter` are its state.)"""
        if self.transport is None or not getattr(self, "_paused", False):
            return await super()._drain_helper()
        waiter = self._drain_waiter
        if waiter is None or waiter.done():  # (done: cancelled, as above)
            waiter = self._drain_waiter = asyncio.get_running_loop().create_future()
            # A connection lost once every writer gave up sets its error with nobody left to read it
            # (asyncio logged "Future exception was never retrieved"): read here, a writer still
            # waiting gets it all the same.
            waiter.add_done_callback(_read_its_error)
        await asyncio.shield(waiter)

    def eof_received(self) -> bool:  # type: ignore[override]  # (asyncio.Protocol's: True keeps our side open)
        """The caller ended its sending side (a FIN): once its requests are whole, they are answered,
        then the connection closes (`half_close`); else it closes now, as aiohttp does (and ends a
        lingering close: the caller sends no more)."""
        if self._lingering is not None:
            self._lingering.end(flush=True)
            return False
        whole = requests_whole(
            getattr(self, "_messages", None),
            self._serving_body,
            headers_begun=self._header_bytes > 0,
            draining=self._unread_body is not None,
            upgraded=getattr(self, "_upgraded", True),
        )
        if not whole:
            return False
        self.peer_ended = True
        self._tell_gone()
        return True

    def _tell_gone(self) -> None:
        """`caller_gone` turns true here (a FIN after whole requests, the connection lost): tell once."""
        told, self.on_gone = self.on_gone, None
        if told is not None:
            told()

    def connection_lost(self, exc: BaseException | None) -> None:
        self.guard.forget(self)
        self._tell_gone()
        if self._refused:
            return
        super().connection_lost(exc)
        # An answered request's body still arriving (an early 413 or 401, an Expect refusal): aiohttp
        # drains it for LINGER_SECONDS and nothing ended that wait once the caller had gone (a reset, a
        # FIN): each such connection held its task for the whole linger. No more of it can come.
        if self._answered_body is not None and not self._answered_body.is_eof():
            self._answered_body.feed_eof()

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """aiohttp's refusals of unparsable requests, in the JSON error body (and logged quietly)."""
        if status >= 500:
            return super().handle_error(request, status, exc, message)
        # Said without the refused bytes, which aiohttp quotes (a ?token= or an Authorization header
        # among them): neither the caller's answer nor the log repeats them.
        reason = parser_reason(exc, message)
        log.debug("refused an unparsable request from %s: %s", request.remote, reason)
        if request.writer.output_size > 0:
            raise ConnectionError("a response was already sent on this connection")
        if isinstance(exc, LineTooLong):  # (aiohttp's 400 for it quoted the line's first 100 bytes)
            status, reason = self._head.line_too_long(exc)
        if self.guard.on_unparsable is not None:  # an answer is sent: counted
            self.guard.on_unparsable(status)
        return self._refusal_answer(BadRequest(reason), status)

    def request_made(self, message: RawRequestMessage, body: StreamReader) -> RawRequestMessage:
        """aiohttp makes the request it serves next (`watch_requests_made`): its body is the one being
        served; a refusal's placeholder gets the caller's HTTP version."""
        self._serving_body = body
        # (the answered one's linger is over: a body that came whole and was never read kept its bytes
        # here for as long as the next request ran, a WebSocket's hours)
        self._answered_body = None
        self.unspoken_version = None
        self.unknown_expect = None
        if message is _REFUSED_PLACEHOLDER:
            return message._replace(version=self.refused_version())
        message, self.unknown_expect = read_expect(message)  # (`expect_lines`: aiohttp's answer came first)
        if message.version.major != 1:  # the status line said `HTTP/3.7 200 OK`, an answer nobody reads
            self.unspoken_version = message.version
            return message._replace(version=HttpVersion(1, 1), should_close=True)
        if message.version.minor > 1:  # RFC 9110 2.5: a later 1.x is answered in the highest one spoken
            return message._replace(version=HttpVersion(1, 1))
        return message

    def refused_version(self) -> HttpVersion:
        """The HTTP version to answer a refused request in (`RequestHead.version`)."""
        return self._head.version()


# The request aiohttp makes to answer one its parser refused: HTTP/1.0, whatever the caller spoke.
_REFUSED_PLACEHOLDER = getattr(web_protocol, "ERROR", None)


def unspoken_version(request: web.BaseRequest) -> HttpVersion | None:
    """The HTTP version `request` named, where it is none this server speaks (`request_made`)."""
    protocol = request.protocol
    return protocol.unspoken_version if isinstance(protocol, GuardedHandler) else None


def unknown_expect(request: web.BaseRequest) -> str | None:
    """The Expect header `request` sent, where it is not `100-continue` (`request_made`)."""
    protocol = request.protocol
    return protocol.unknown_expect if isinstance(protocol, GuardedHandler) else None


def watch_requests_made(server: web.Server) -> None:
    """Each request aiohttp makes on a GuardedHandler's connection goes through `request_made`: a request
    its parser refused is answered in the caller's HTTP version (`refused_version`), with `Connection:
    close`, not in the HTTP/1.0 of the placeholder request aiohttp makes for the refusal; and the handler
    knows the body of the request it serves from then on (`eof_received`), before the request reaches
    the app. Through the server's `request_factory` (a public attribute each connection's handler reads
    when it is made); without the placeholder (another aiohttp) refusals stay HTTP/1.0."""
    made = server.request_factory

    def make_request(
        message: RawRequestMessage,
        payload: StreamReader,
        protocol: RequestHandler,
        writer: AbstractStreamWriter,
        task: asyncio.Task[None],
    ) -> web.BaseRequest:
        if isinstance(protocol, GuardedHandler):
            message = protocol.request_made(message, payload)
        return made(message, payload, protocol, writer, task)

    server.request_factory = make_request


def _read_its_error(waiter: asyncio.Future[None]) -> None:
    if not waiter.cancelled():
        waiter.exception()


def raw_answer(response: web.Response) -> bytes:
    """A whole response's bytes, for a connection no request runs on (its headers still arrive)."""
    body = response.body if isinstance(response.body, bytes) else b""
    lines = [f"HTTP/1.1 {response.status} {response.reason}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items() if name != "Content-Length"]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body
