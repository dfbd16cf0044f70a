"""What a request's handler (and the app) may ask of the connection the request came on, where
`server.listen` serves it through `connection_guard.GuardedHandler`: a no-op elsewhere (aiohttp's own
server in tests)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

from aiohttp import web

from .connection_guard import GuardedHandler


async def close_unframed_http10(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: an HTTP/1.0 answer of no known length (a stream: 1.0 has no chunks) ends
    with its connection. aiohttp left a keep-alive caller's connection open after it (its own check
    comes too late to reach the response's keep-alive), so the caller, reading to the close, waited
    for the header deadline after every stream."""
    if request.version < (1, 1) and response.content_length is None and not response.chunked:
        if not isinstance(response, web.WebSocketResponse):
            response.force_close()


def idle_reporter(request: web.BaseRequest) -> Callable[[Callable[[], object] | None], None]:
    """For a WebSocket handler: report its connection idle (with how to close it) or in use again, to
    the guard of the socket it came on; a no-op where it was not served by `listen` (aiohttp's own
    server in tests)."""
    handler = request.protocol
    if isinstance(handler, GuardedHandler):
        return functools.partial(handler.guard.set_idle, handler)
    return lambda close: None


def tell_received(request: web.BaseRequest, told: Callable[[], object] | None) -> None:
    """For a WebSocket handler: call `told` each time its connection receives bytes (None: no more);
    a no-op where it was not served by `listen`."""
    handler = request.protocol
    if isinstance(handler, GuardedHandler):
        handler.on_received = told


def tell_gone(request: web.BaseRequest, told: Callable[[], object] | None) -> bool:
    """For a handler that writes nothing while it waits (a `/synth`): call `told` once when its caller
    has gone (None: no more), where `hang_up.caller_gone` turns true, so it need not look on a timer.
    False where it was not served by `listen` (aiohttp's own server in tests): it looks itself."""
    handler = request.protocol
    if isinstance(handler, GuardedHandler):
        handler.on_gone = told
        return True
    return False


def bytes_received(request: web.BaseRequest) -> Callable[[], int] | None:
    """For a WebSocket handler: how many bytes its connection has received so far; None where it was
    not served by `listen` (aiohttp's own server in tests)."""
    handler = request.protocol
    if isinstance(handler, GuardedHandler):
        return lambda: handler.bytes_received
    return None


def peer_ended(request: web.BaseRequest) -> bool:
    """Whether the caller ended its sending side after its request (`GuardedHandler.eof_received` keeps
    the connection open to answer it): a hang-up for a handler that looks; False where it was not served
    by `listen`."""
    handler = request.protocol
    return isinstance(handler, GuardedHandler) and handler.peer_ended


@contextlib.contextmanager
def body_left_unread(request: web.BaseRequest) -> Iterator[None]:
    """While a handler waits before reading its body (the OpenAI speech routes' wait for the load): a
    body past aiohttp's read-ahead is not whole because the worker reads none, so its connection is in
    use, not a slow body the guard closes for room; the body's clock starts again once the wait ends."""
    handler = request.protocol
    if not isinstance(handler, GuardedHandler):
        yield
        return
    handler.guard.unread.add(handler)
    try:
        yield
    finally:
        handler.guard.unread.discard(handler)
        if handler.guard.body_of(handler) is request.content:  # (still this request's, still open)
            handler.guard.request_arrived(handler, request.content)
