"""A WebSocket's standing with the connection guard: idle (may be closed to admit another connection
when `--max-connections` is reached) or in use (never closed for that).

Both socket routes (`/ws` and `/v1/audio/speech/stream`) hold one, marking themselves idle while
nothing runs on them and nothing is half-received, so a worker full of forgotten sockets still admits a
health check or a new caller. The close is 1013 (try again later): a client reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiohttp import WSCloseCode, web

from ..connection_hooks import idle_reporter

log = logging.getLogger(__name__)

RECLAIM_CLOSE_SECONDS = 1.0  # an idle socket closed to admit another: how long its peer gets to answer
RECLAIM_MESSAGE = b"idle connection closed to admit another"


class Standing:
    """Reports one socket idle or in use to the guard of the connection it came on (a no-op where the
    app is not served by `server.listen`, e.g. aiohttp's test server)."""

    def __init__(self, request: web.BaseRequest, ws: web.WebSocketResponse) -> None:
        self._report = idle_reporter(request)
        self._ws = ws
        self._closing: asyncio.Task[None] | None = None

    def idle(self) -> None:
        self._report(self._reclaim)

    def in_use(self) -> None:
        self._report(None)

    def _reclaim(self) -> None:
        """The worker is full and this socket is the one idle longest: close it with 1013; a peer that
        does not answer the close is cut after RECLAIM_CLOSE_SECONDS."""
        log.info("closing an idle WebSocket to admit a new connection (--max-connections reached)")
        self._closing = asyncio.get_running_loop().create_task(self._close())

    async def _close(self) -> None:
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(RECLAIM_CLOSE_SECONDS):
                await self._ws.close(code=WSCloseCode.TRY_AGAIN_LATER, message=RECLAIM_MESSAGE)
