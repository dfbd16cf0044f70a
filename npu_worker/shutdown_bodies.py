"""At shutdown aiohttp's `Server.pre_shutdown` closes every connection with `RequestHandler.close()`,
and a closed handler drops every byte that arrives after it (`data_received` returns at once): a request
whose headers were in but whose body was still arriving when the SIGTERM came never got its body, so it
never got its answer (docs/protocol.md's 429 `QueueFull`, `the worker is shutting down`): its caller
waited for the drain and 2 s more, then saw the connection cut. Such a connection now reads that body to
its end and closes after the answer; a kept-alive connection waiting for its next request reads it
too (the 429, not a request dropped until the drain's end and a cut connection). A WebSocket (an
upgraded connection) is left reading too: closed there, it dropped every frame its peer sent during
the drain (a message, a pong, its close), so a speech stream's `session.config` or `input.text` then
went unanswered until the 1001; the app's shutdown closes it with 1001 after the drain
(`ws_server/opening.close_sockets`). Every other connection is closed as aiohttp closes it.

aiohttp (3.14) has no public word for a connection's state: whether it was upgraded (`_upgraded`),
waits for its next request (`_waiter`) or holds one queued (`_messages`) are its handler's private
slots, read through `_private`; an aiohttp that has moved one leaves such connections closed as
aiohttp closes them (what it did before this module), where the shutdown's `pre_shutdown` raised an
AttributeError half-way through the connections, the rest left unclosed. The server's
`connections`, `pre_shutdown` and `shutdown` and the handler's `keep_alive` and `close` are public."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler

MOVED = object()  # a private name this aiohttp does not have


def _private(handler: RequestHandler, name: str) -> Any:
    """aiohttp's private state `name` of `handler`, or MOVED where this aiohttp has none by that name."""
    return getattr(handler, name, MOVED)


def arriving_body(handler: RequestHandler) -> StreamReader | None:
    """The body of the request being answered on `handler`, if it is not yet read to its end."""
    body = getattr(handler, "_serving_body", None)  # (GuardedHandler's own: the request it answers)
    # (one with an exception set is read no more: its answer went without it, a 413 before the body)
    return body if body is not None and not body.is_eof() and body.exception() is None else None


def still_receiving(handler: RequestHandler) -> bool:
    """The request being answered on `handler` has a body not yet read to its end."""
    return arriving_body(handler) is not None


def upgraded(handler: RequestHandler) -> bool:
    """`handler`'s connection is a WebSocket's (aiohttp's `_upgraded`; False where it has moved)."""
    return _private(handler, "_upgraded") is True


def waiting_for_a_request(handler: RequestHandler) -> bool:
    """`handler`'s connection is kept alive between requests: closed by aiohttp's `close`, it drops
    the next request's bytes, and that caller waited out the whole drain for a cut connection; left
    reading, the request gets the shutdown's 429 `QueueFull` at once."""
    waiter = _private(handler, "_waiter")  # (aiohttp's: the future `start` awaits for the next request)
    messages = _private(handler, "_messages")  # (aiohttp's: the requests read and not yet answered)
    if waiter is MOVED or messages is MOVED:
        return False
    return waiter is not None and not waiter.done() and not messages


def finish_bodies_at_shutdown(server: web.Server) -> None:
    """`server.pre_shutdown` leaves a connection whose request body still arrives open for that body,
    and a WebSocket open for its messages until the drain ends, each with keep-alive off (closed once
    it is answered), and `server.shutdown` (after the app's drain, where
    aiohttp's sets `_force_close`, which drops bytes as `close` does) first waits, for its timeout at
    most, for such bodies to end; then it ends every connection as aiohttp does."""

    def pre_shutdown() -> None:  # (aiohttp's: `conn.close()` for each connection)
        for conn in server.connections:
            if still_receiving(conn) or upgraded(conn) or waiting_for_a_request(conn):
                conn.keep_alive(False)  # (a WebSocket: read on until its 1001)
            else:
                conn.close()

    ending = server.shutdown

    async def shutdown(timeout: float | None = None) -> None:
        arriving = [body for conn in server.connections if (body := arriving_body(conn)) is not None]
        if arriving:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    # (a body the handler left unread ends with an exception: no fault of the shutdown's)
                    await asyncio.gather(*(body.wait_eof() for body in arriving), return_exceptions=True)
        await ending(timeout)

    server.pre_shutdown = pre_shutdown  # type: ignore[method-assign]
    server.shutdown = shutdown  # type: ignore[method-assign]
