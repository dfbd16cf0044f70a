"""The WebSocket handshake both socket routes share (`/ws`, `WS /v1/audio/speech/stream`)."""

from __future__ import annotations

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
