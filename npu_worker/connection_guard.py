"""The bounds a slow or greedy client cannot get around, on every connection `server.listen` serves.

aiohttp waits for request headers without a deadline and accepts every connection, so a few hundred
sockets that send one header byte a second hold every file descriptor and lock other clients out
(slowloris). Here a connection must finish its request headers within `header_timeout` seconds while
it is really waiting for them: from the connection, and on a kept-alive connection from the end of the
previous response, until the request reaches the app. Once it has, only `--body-timeout` bounds its body
(where it is read: `read_body`, the voice upload) and nothing but the client bounds the response: a
long NDJSON stream, a WebSocket or a slowly read file is never cut here. At most `max_connections` are
open: a new one over the cap evicts the connection that has waited longest for its headers, else the
WebSocket that has been idle longest (open, nothing running on it: `ws_server/standing.py` closes it
with 1013, try again later), else the request whose body has been arriving longest (for at least
SLOW_BODY_SECONDS: sockets that send their headers at once and then trickle a body held every place for
`--body-timeout` each, again and again), so a client that sends a whole request at once (a health check)
gets in unless every connection is really in use (a request running, or its body coming promptly).
A reply its caller leaves unread (its receive window closed) for UNREAD_SECONDS ends the connection.
Parser-level refusals get the JSON error body, in the caller's HTTP version, quoting nothing of the
request, after the requests sent before them; a caller's FIN after whole requests leaves them answered.

The two moments come from public aiohttp hooks, not from its parser's private state: the request
reaching the app is the outermost middleware (`guard_middleware`), the response being finished is the
access logger (`server.RedactingAccessLogger`), which aiohttp calls once the last byte is written
(`AbstractAccessLogger.log`).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from aiohttp import web, web_protocol
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http import HttpVersion, HttpVersion10, HttpVersion11, RawRequestMessage
from aiohttp.http_exceptions import LineTooLong
from aiohttp.streams import StreamReader
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestHandler, _ErrInfo

from . import wire
from .parser_reasons import parser_reason
from .protocol import BadRequest, ErrorBody, WorkerError

log = logging.getLogger(__name__)
REFUSAL_REPORT_SECONDS = 10.0

# A request whose body is still arriving this long after its headers may be evicted at the cap (a JSON
# body or a voice upload sent at once arrives within milliseconds; a lecture batch is tens of KiB).
SLOW_BODY_SECONDS = 1.0
# Data a caller leaves untaken this long (its receive window closed) ends the connection (TCP_USER_TIMEOUT):
# a reply the kernel cannot send otherwise holds the connection, uncounted by any deadline, for ever.
UNREAD_SECONDS = 60.0
# A request's header lines together; browsers send a few KiB (`http_compat/errors.py` refuses a request
# that has more). aiohttp takes 128 lines of 8 KiB and holds each whole line until the request is
# complete: a connection that sent them and never ended its headers held them until the header deadline.
MAX_HEADER_BYTES = 64 * 1024
# Header ends a piece is cut at before aiohttp parses it (`GuardedHandler._parse`): a batch of pipelined
# requests in one write longer than this loses those before the cut again if a later one is malformed.
SPLITS_PER_PIECE = 32
# The start of a request's headers kept while they arrive: its path picks the shape of a refusal sent
# before the app sees it (OpenAI's under /v1/), and whether its first line ended tells a target too long
# (414) from a header line too long (431).
REQUEST_HEAD_BYTES = 1024

Refusal = Callable[[str, WorkerError, int], web.Response]  # (path, error, status) → the error body


def v1_refusal(path: str, error: WorkerError, status: int) -> web.Response:
    """The error body of a refusal where no app says otherwise (aiohttp's own server in tests)."""
    body = wire.encode(ErrorBody.of(error))
    return web.Response(status=status, body=body, content_type="application/json", charset="utf-8")


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The request's headers are in: its connection is no longer subject to the header deadline."""
    protocol = request.protocol
    if isinstance(protocol, GuardedHandler):
        protocol.request_arrived(request.content)
    return await handler(request)


class ConnectionGuard:
    """Open connections, those waiting for request headers (longest waiting first), and those whose
    request has reached the app, with its body (in arrival order: a body may still be coming)."""

    def __init__(self, max_connections: int, header_timeout: float) -> None:
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.open: set[GuardedHandler] = set()
        self.waiting: OrderedDict[GuardedHandler, asyncio.TimerHandle] = OrderedDict()
        self.idle: OrderedDict[GuardedHandler, Callable[[], object]] = OrderedDict()  # how to close each
        self.requests: OrderedDict[GuardedHandler, tuple[float, StreamReader]] = OrderedDict()  # arrived at
        self.evicted = 0
        self.reclaimed = 0
        self.slow_bodies = 0
        self.timed_out = 0
        self.refused = 0
        self.on_close: Callable[[str], object] | None = None  # /metrics: why the guard closed one
        self.on_unparsable: Callable[[int], object] | None = None  # /metrics: a parser refusal's status
        self.refusal: Refusal = v1_refusal  # the app's error body for a path (`server.listen` sets it)
        self._refusals_reported = -REFUSAL_REPORT_SECONDS

    def _closed(self, reason: str) -> None:
        if self.on_close is not None:
            self.on_close(reason)

    def admit(self, handler: GuardedHandler) -> bool:
        """Register a new connection; False if it has to be refused (full of busy connections)."""
        if len(self.open) >= self.max_connections:
            if self.waiting:
                oldest = next(iter(self.waiting))
                self.evicted += 1
                self._closed("evicted")
                self.forget(oldest)
                oldest.force_close()
            elif self.idle:
                oldest, close = self.idle.popitem(last=False)
                self.reclaimed += 1
                self._closed("reclaimed")
                self.forget(oldest)
                close()
            elif (slowest := self._slowest_body()) is not None:
                self.slow_bodies += 1
                self._closed("slow_body")
                self.forget(slowest)
                slowest.force_close()  # its handler's read ends as a caller that left: a quiet 499
            else:
                self._refuse()
                return False
        self.open.add(handler)
        return True

    def _slowest_body(self) -> GuardedHandler | None:
        """The connection whose request body has been arriving longest, if for SLOW_BODY_SECONDS."""
        since = time.monotonic() - SLOW_BODY_SECONDS
        for handler, (arrived, body) in self.requests.items():
            if arrived > since:
                return None  # (arrival order: every later one came after it)
            if not body.is_eof():
                return handler
        return None

    def _refuse(self) -> None:
        """Every connection is in use: the new one is closed. Said in the log (at most once per
        REFUSAL_REPORT_SECONDS), since callers and health checks alike are shut out meanwhile."""
        self.refused += 1
        self._closed("refused")
        now = time.monotonic()
        if now - self._refusals_reported >= REFUSAL_REPORT_SECONDS:
            self._refusals_reported = now
            log.warning(
                "all %d connections are in use (none waiting for headers, no idle socket, no slow body): "
                "new ones are refused (%d so far); see --max-connections",
                self.max_connections,
                self.refused,
            )

    def set_idle(self, handler: GuardedHandler, close: Callable[[], object] | None) -> None:
        """A long-lived connection (a WebSocket) holds nothing running now and may be closed by `close`
        to admit a new one when the cap is reached; `None`: it is in use again."""
        self.idle.pop(handler, None)
        if close is not None and handler in self.open:
            self.idle[handler] = close

    def await_headers(self, handler: GuardedHandler) -> None:
        """Start the header deadline now (a new connection, or one whose response just finished)."""
        self.headers_done(handler)
        self.requests.pop(handler, None)
        if handler in self.open and self.header_timeout > 0:
            loop = asyncio.get_running_loop()
            self.waiting[handler] = loop.call_later(self.header_timeout, self._expire, handler)

    def headers_done(self, handler: GuardedHandler) -> None:
        timer = self.waiting.pop(handler, None)
        if timer is not None:
            timer.cancel()

    def request_arrived(self, handler: GuardedHandler, body: StreamReader) -> None:
        """A request reached the app: no header deadline; its body (maybe still coming) is watched."""
        self.headers_done(handler)
        if handler in self.open:
            self.requests.pop(handler, None)
            self.requests[handler] = (time.monotonic(), body)

    def body_of(self, handler: GuardedHandler) -> StreamReader | None:
        """The body of the request `handler` is serving now, if one has reached the app."""
        entry = self.requests.get(handler)
        return entry[1] if entry is not None else None

    def forget(self, handler: GuardedHandler) -> None:
        self.headers_done(handler)
        self.idle.pop(handler, None)
        self.requests.pop(handler, None)
        self.open.discard(handler)

    def _expire(self, handler: GuardedHandler) -> None:
        if self.waiting.pop(handler, None) is not None:
            self.timed_out += 1
            self._closed("header_timeout")
            handler.force_close()


class GuardedHandler(RequestHandler):
    """aiohttp's connection handler, reporting to the guard when it waits for headers and when not."""

    def __init__(self, manager: web.Server, *, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self.guard = guard
        self._refused = False
        self.bytes_received = 0  # on this connection so far (a WebSocket's message deadline reads it)
        self._header_bytes = 0  # received for headers not yet complete; -1: their end was seen
        self._header_tail = b""  # the last bytes of them (an end split across two pieces)
        self._request_head = b""  # their first bytes, up to the end of the request line (REQUEST_HEAD_BYTES)
        self._request_line = 0  # bytes of the request line seen so far (a longer one is cut from the head)
        self._request_line_ended = False
        self._refused_head = b""  # the first bytes of a refused request that followed others in a piece
        self._unread_body: StreamReader | None = None  # the answered request's, still arriving (drained)
        self.on_received: Callable[[], object] | None = None  # told after each piece (the body budget)
        self.peer_ended = False  # the caller ended its sending side after whole requests (`eof_received`)
        self._serving_body: StreamReader | None = None  # the request's being answered (`request_made`)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._refused = not self.guard.admit(self)
        if self._refused:
            transport.close()
            return
        super().connection_made(transport)
        drop_when_unread(transport)
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        self.bytes_received += len(data)
        draining = self._unread_body is not None  # (not ended before this piece: the piece is its body)
        if not draining and self._header_bytes >= 0 and self in self.guard.waiting:
            self._keep_request_head(data)
        self._parse(data)
        self._refuse_body_the_parser_refused()
        if draining:
            if self._unread_body is not None and self._unread_body.is_eof():
                self._unread_body = None  # (what follows the body's end in this piece goes uncounted)
        elif self._header_bytes >= 0 and self in self.guard.waiting:
            self._count_header_bytes(data)
        if self.on_received is not None:
            self.on_received()

    def _parse(self, data: bytes) -> None:
        """Hand `data` to aiohttp a request's headers at a time. Its parser drops the requests it completed
        in a piece once a later one in that piece is malformed (its error alone is queued): a valid
        request and a malformed one sent in one write got the 400 alone, the first never run and its
        caller reading the 400 as its answer. Cut after each blank line (at most SPLITS_PER_PIECE), the
        requests before the fault are queued before its error; the parser reads pieces as one stream, so
        a body cut there (a multipart part's headers) reads the same. Nothing after a refusal is parsed:
        the connection closes after it, and the parser, refusing every later cut again, had the last
        cut's request (a /v1/ one, an HTTP/1.0 one) pick the shape and version of the first's refusal."""
        start = 0
        for _ in range(SPLITS_PER_PIECE):
            end = data.find(b"\r\n\r\n", start) + 4
            if end < 4 or end >= len(data):
                break
            if self._feed(data, start, end):
                return
            start = end
        self._feed(data, start, len(data))

    def _feed(self, data: bytes, start: int, end: int) -> bool:
        """aiohttp parses data[start:end]; True where it refused (a refusal is queued last). Where it
        refuses a request that followed others in the piece, that request's first bytes pick its
        refusal's shape and HTTP version (`_refused_head`)."""
        super().data_received(data[start:end] if start or end < len(data) else data)
        messages = getattr(self, "_messages", None)
        refused = messages is not None and len(messages) > 0 and isinstance(messages[-1][0], _ErrInfo)
        if refused and start:
            self._refused_head = data[start : start + REQUEST_HEAD_BYTES]
        return refused

    def _keep_request_head(self, data: bytes) -> None:
        """The first bytes of the request whose headers arrive, and how long its first line is, over
        every piece until that line ends (the first piece alone was kept: a line sent in two writes, or
        one over REQUEST_HEAD_BYTES, was a request line too long when a header line was, and a path cut
        short in the first piece picked the wrong shape)."""
        if self._request_line_ended:
            return
        head = self._request_head
        if len(head) < REQUEST_HEAD_BYTES:
            self._request_head = head + data[: REQUEST_HEAD_BYTES - len(head)]
        end = data.find(b"\n")
        self._request_line += len(data) if end < 0 else end
        self._request_line_ended = end >= 0

    def _request_path(self) -> str:
        """The path of the request whose headers are arriving (or were refused); "/" if not yet known."""
        parts = (self._refused_head or self._request_head).split(b"\n", 1)[0].split(b" ")
        if len(parts) < 2:
            return "/"
        target = parts[1].decode("latin-1")
        if "://" in target:  # absolute form (RFC 9112 §3.2.2): what follows the authority
            target = "/" + target.split("://", 1)[1].partition("/")[2]
        return target.partition("?")[0]

    def _refusal_answer(self, error: WorkerError, status: int) -> web.Response:
        """The refusal of the request whose headers are arriving, in the shape its path has; it closes
        the connection."""
        response = self.guard.refusal(self._request_path(), error, status)
        response.force_close()
        return response

    def _count_header_bytes(self, data: bytes) -> None:
        """Headers still arriving past MAX_HEADER_BYTES: refused now, not at the header deadline. Only
        until the blank line that ends them (a body sent with them is not counted)."""
        joint = self._header_tail + data[:3]  # (an end split across two pieces; no copy of the piece)
        ended = any(end in piece for end in (b"\r\n\r\n", b"\n\n") for piece in (data, joint))
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
        self._header_bytes, self._header_tail, self._request_head = 0, b"", b""
        self._request_line, self._request_line_ended = 0, False
        self.guard.await_headers(self)

    def _refuse_body_the_parser_refused(self) -> None:
        """aiohttp's C parser, refusing bytes inside a body its handler is reading (a bad chunk size, a
        chunk without its CRLF, a bad or an excess trailer), queues its 400 for after that request and
        drops the body without ending it: the handler waited for the rest until `--body-timeout`, then
        answered a 408 that blamed the network. The parser's error is handed to that body instead, so
        its reader answers the refusal at once (`read_body`: 400). So too for a body whose request is
        queued, not yet served: its headers and the bad bytes sent in one write (`_parse` cuts the piece
        after the headers, and the request is queued before the refusal) waited the same. The queue of
        parsed messages is aiohttp's private state, read only here; without it nothing changes."""
        messages = getattr(self, "_messages", None)
        if not messages or not isinstance(refused := messages[-1][0], _ErrInfo):
            return
        queued = [body for message, body in messages if not isinstance(message, _ErrInfo)]
        for body in (*queued, self._serving_body, self.guard.body_of(self)):
            if body is not None and not body.is_eof() and body.exception() is None:
                body.set_exception(refused.exc)
                body.feed_eof()  # ended: a handler that never reads it is not read on after its answer

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
        self.force_close()

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
        """The caller ended its sending side (a FIN). aiohttp closed the connection there, before its
        answer: a caller that sends a request and half-closes (`printf 'GET /health HTTP/1.0\\r\\n\\r\\n'
        | nc -N`, a health check's probe) got nothing, not even to a `/health`. Once the requests it sent
        are whole (their headers, and their bodies), the connection stays open to answer them and closes
        after the last; a handler that looks whether its caller is there (`hang_up.caller_gone`: `/synth`,
        the OpenAI speech routes) finds it gone and stops, as at any FIN. A request cut short, an
        unfinished body and a WebSocket close at once, as before. (aiohttp's private state is read, never
        changed: where it is missing, the connection closes.)"""
        if not self._sent_whole_requests():
            return False
        self.peer_ended = True
        return True

    def _sent_whole_requests(self) -> bool:
        """Whether the caller sent requests not yet answered, all whole: no headers begun since, each
        body in, no WebSocket."""
        queued = getattr(self, "_messages", None)
        if queued is None or self._header_bytes > 0 or self._unread_body is not None:
            return False
        if getattr(self, "_upgraded", True):
            return False
        bodies = [body for _, body in queued]
        if self._serving_body is not None:
            bodies.append(self._serving_body)
        return bool(bodies) and all(body.is_eof() for body in bodies)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.guard.forget(self)
        if not self._refused:
            super().connection_lost(exc)

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
            status, reason = self._line_too_long(exc)
        if self.guard.on_unparsable is not None:  # an answer is sent: counted
            self.guard.on_unparsable(status)
        return self._refusal_answer(BadRequest(reason), status)

    def request_made(self, message: RawRequestMessage, body: StreamReader) -> RawRequestMessage:
        """aiohttp makes the request it serves next (`watch_requests_made`): its body is the one being
        served; a refusal's placeholder gets the caller's HTTP version."""
        self._serving_body = body
        if message is _REFUSED_PLACEHOLDER:
            return message._replace(version=self.refused_version())
        return message

    def refused_version(self) -> HttpVersion:
        """The HTTP version to answer a refused request in: 1.0 where its request line says so, else
        1.1 (RFC 9112 §2.3: the highest the server speaks)."""
        line = (self._refused_head or self._request_head).split(b"\n", 1)[0].rstrip(b"\r")
        return HttpVersion10 if line.endswith(b" HTTP/1.0") else HttpVersion11

    def _line_too_long(self, exc: LineTooLong) -> tuple[int, str]:
        """A request line over aiohttp's bound is a target too long (414), a header line one of the
        headers too large (431), as RFC 9110 and RFC 6585 name them."""
        limit = exc.args[1] if len(exc.args) > 1 else "its limit"
        if not self._request_line_ended or (isinstance(limit, int) and self._request_line > limit):
            return 414, f"the request line passes {limit} bytes; that is the limit"
        return 431, f"a request header line passes {limit} bytes; that is the limit"


# The request aiohttp makes to answer one its parser refused: HTTP/1.0, whatever the caller spoke.
_REFUSED_PLACEHOLDER = getattr(web_protocol, "ERROR", None)


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


def drop_when_unread(transport: asyncio.BaseTransport) -> None:
    """Let the kernel end the connection once what it holds for the caller has waited UNREAD_SECONDS
    unsent (a closed receive window) or unacknowledged. A caller that stopped reading otherwise held its
    connection for ever: a reply still being written (aiohttp waits for the socket to drain, no
    deadline), and one already finished, whose close waits for the rest to be sent, when the header
    deadline or an eviction closes it. Progress, however slow, and an idle connection are not affected.
    Linux only (elsewhere the option does not exist)."""
    option = getattr(socket, "TCP_USER_TIMEOUT", None)
    sock = transport.get_extra_info("socket")
    if option is None or sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    sock.setsockopt(socket.IPPROTO_TCP, option, int(UNREAD_SECONDS * 1000))
