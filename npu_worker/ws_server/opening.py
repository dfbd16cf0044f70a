"""The WebSocket handshake both socket routes share (`/ws`, `WS /v1/audio/speech/stream`)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from ..app_keys import SETTINGS_KEY


async def open_socket(request: web.Request) -> web.WebSocketResponse:
    """The prepared socket: no compression (PCM barely compresses and the CPU is the engine's), pings
    every heartbeat interval (a peer that vanished without closing is dropped, its request cancelled).

    A handshake aiohttp cannot read (a `Sec-WebSocket-Key` that is not ASCII raises ValueError in its
    base64 check) is the caller's 400, not an internal error."""
    settings = request.app[SETTINGS_KEY]
    ws = web.WebSocketResponse(
        compress=False, max_msg_size=settings.max_body_bytes, heartbeat=settings.heartbeat_interval or None
    )
    try:
        await ws.prepare(request)
    except ValueError as exc:
        raise web.HTTPBadRequest(text=f"invalid WebSocket handshake: {exc}") from None
    return ws


UNREAD_GRACE_SECONDS = 1.0  # a socket's handler has ended: what its peer gets to take what is still unsent


def abort_connection(request: web.BaseRequest) -> None:
    """Drop the connection at once, with whatever it still holds for the peer."""
    transport = request.transport
    if transport is not None:
        transport.abort()


def let_go(request: web.BaseRequest) -> None:
    """The socket's handler has ended. A peer that has not taken what was written to it within
    UNREAD_GRACE_SECONDS is cut: asyncio's close waits for unsent data to go out, so a peer that reads
    nothing, even one the heartbeat found silent and closed, kept its connection, its buffers and its
    place under `--max-connections` for as long as it kept the TCP connection open."""
    transport = request.transport
    if transport is not None and transport.get_write_buffer_size():
        asyncio.get_running_loop().call_later(UNREAD_GRACE_SECONDS, _abort_if_unread, transport)


def _abort_if_unread(transport: asyncio.Transport) -> None:
    if transport.get_write_buffer_size():
        transport.abort()
