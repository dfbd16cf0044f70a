"""The open connections `server.listen` serves, in the order the bounds on them need
(`connection_guard.GuardedHandler` reports to it): the header deadline of each waiting for its request's
headers, and the cap of `--max-connections`, which evicts the connection that has waited longest for its
headers, else the WebSocket idle longest, else the request whose body has been arriving longest (for
SLOW_BODY_SECONDS at least), and refuses a new one only when every connection is really in use (see
`connection_guard`'s docstring for why each).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp import web
from aiohttp.streams import StreamReader

from . import lingering_close, wire
from .protocol import ErrorBody, WorkerError

if TYPE_CHECKING:
    from .connection_guard import GuardedHandler

log = logging.getLogger(__name__)
REFUSAL_REPORT_SECONDS = 10.0

# A request whose body is still arriving this long after its headers may be evicted at the cap (a JSON
# body or a voice upload sent at once arrives within milliseconds; a lecture batch is tens of KiB).
SLOW_BODY_SECONDS = 1.0

Refusal = Callable[[str, WorkerError, int], web.Response]  # (path, error, status) → the error body


def v1_refusal(path: str, error: WorkerError, status: int) -> web.Response:
    """The error body of a refusal where no app says otherwise (aiohttp's own server in tests)."""
    body = wire.encode(ErrorBody.of(error))
    return web.Response(status=status, body=body, content_type="application/json", charset="utf-8")


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
        self.unread: set[GuardedHandler] = set()  # a handler waits before it reads its body: no slow body
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
            if not body.is_eof() and handler not in self.unread:
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

    def await_close(self, handler: GuardedHandler) -> None:
        """A connection closing after its answer while its caller still sends (`lingering_close`): in the
        table as one waiting for headers (counted, evicted first), ended by the linger's own bounds; the
        header deadline only past them. A shorter `--header-timeout` cut it (a reset, the caller perhaps
        still sending) and counted it a `header_timeout`."""
        self.headers_done(handler)
        self.requests.pop(handler, None)
        if handler in self.open:
            after = max(self.header_timeout, lingering_close.TOTAL_SECONDS + 1.0)  # (a backstop only)
            self.waiting[handler] = asyncio.get_running_loop().call_later(after, self._expire, handler)

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
        self.unread.discard(handler)
        self.open.discard(handler)

    def _expire(self, handler: GuardedHandler) -> None:
        if self.waiting.pop(handler, None) is not None:
            self.timed_out += 1
            self._closed("header_timeout")
            handler.force_close()
