"""`GET /ws`: one WsSession per socket (PROTOCOL §6); token and origin were checked by the middleware."""

from __future__ import annotations

import logging
import time

from aiohttp import WSCloseCode, WSMsgType, web

from ..app_keys import CLOSING_SOCKETS_KEY, LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY, WS_SESSIONS_KEY
from ..http_compat.metrics import METRICS_KEY
from .masked_frames import require_aiohttp_hooks
from .opening import let_go, open_socket
from .schedule import schedule_sizes
from .socket_reading import SocketReading
from .standing import Standing

log = logging.getLogger(__name__)


def setup_ws(app: web.Application) -> None:
    """Register `GET /ws` on an app whose SCHEDULER_KEY, SETTINGS_KEY and LIMITS_KEY are (or will be) set.

    A chunk schedule that cannot work is refused here, at startup, rather than on the first request,
    as is an aiohttp whose private hooks the sockets' mask check needs have moved (`masked_frames`).
    """
    require_aiohttp_hooks()
    settings = app.get(SETTINGS_KEY)
    if settings is not None:
        schedule_sizes(settings.chunk_schedule_ms, 24000)
    app.router.add_get("/ws", handle_ws)


async def close_sockets(app: web.Application) -> tuple[int, int]:
    """Shutdown, after the drain: every open WebSocket session (`/ws`, and the OpenAI speech stream's,
    which add themselves) is told and closed with 1001, at once and together (`going_away`), instead
    of being cut when aiohttp's shutdown timeout runs out. Returns how many were open, and how many of
    them had a request still running (ended with the shutdown's `QueueFull`)."""
    return await app[WS_SESSIONS_KEY].close_all()


async def handle_ws(request: web.Request) -> web.StreamResponse:
    from .session import WsSession  # numpy and the PCM path load with the first socket, not with the app

    app = request.app
    settings = app[SETTINGS_KEY]
    ws = await open_socket(request)
    metrics = app.get(METRICS_KEY)
    reading = SocketReading(request, ws)
    session = WsSession(
        request,
        ws,
        app[SCHEDULER_KEY],
        settings,
        app[LIMITS_KEY],
        standing=Standing(request, ws),
        count_error=metrics.count_error if metrics is not None else None,
        abort=reading.abort,
    )
    sessions = app[WS_SESSIONS_KEY]
    sessions.add(session)
    try:
        async for message in reading.messages():
            if message.type == WSMsgType.TEXT:
                handling = session.on_text(message.data, time.monotonic())
                del message  # (up to --max-body-bytes: not kept while the request it started runs)
                await handling
            elif message.type == WSMsgType.BINARY:
                await ws.close(code=WSCloseCode.UNSUPPORTED_DATA, message=b"binary frames are not accepted")
                break
            elif message.type == WSMsgType.ERROR:  # aiohttp has closed it (1009: over --max-body-bytes)
                app[CLOSING_SOCKETS_KEY].linger_failed(request)
                break
    except ConnectionError as exc:  # an answer the peer took nothing of (the send deadline), or it left:
        log.debug("ws: the peer is gone (%s)", exc)  # its doing, never an internal error with an incident
    finally:
        reading.close()
        sessions.discard(session)
        await session.close()
        let_go(request)
        log.debug("ws closed: code %s", ws.close_code)  # 1000 from a page that closed it properly
    return ws
