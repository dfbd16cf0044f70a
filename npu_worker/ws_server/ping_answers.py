"""A peer's pings answered beside the reading of its messages, never in its way.

The loop that reads a socket (`message_deadline.messages`) answered each ping and waited there until
the peer took the pong: a peer that pinged without reading stopped that loop, and with it the message
watch's sense of a message being read (it took the socket for one busy with a message, and timed only
one past 64 KiB). A small message begun then and trickled a byte at a time (each byte putting the
heartbeat's ping off) kept its socket for ever. Now a pong is written at once (a frame as aiohttp's
writer makes it, `burst.frame_header`); while the peer's buffers are full, only the newest ping waits to
be answered once they drain (RFC 6455 §5.5.3 allows that), under `opening.taken`'s deadline, as any
frame the worker sends: a peer that takes nothing for 1.5 heartbeat intervals is closed with 1008.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import WSMsgType, web

from .burst import frame_header
from .opening import taken


class PingAnswers:
    """One socket's pongs: `answer(payload)` for each ping read, `close()` when the socket ends."""

    def __init__(
        self,
        request: web.Request,
        ws: web.WebSocketResponse,
        grace: float,
        abort: Callable[[], object],
    ) -> None:
        self._request, self._ws = request, ws
        self._grace, self._abort = grace, abort
        self._newest: bytes | None = None  # the ping to answer once the peer's buffers drain
        self._draining: asyncio.Task[None] | None = None

    def answer(self, payload: bytes) -> None:
        if self._draining is not None:  # a pong already waits on the peer: this ping's replaces it
            self._newest = payload
            return
        self._write(payload)
        if self._request.protocol.writing_paused:
            self._draining = asyncio.get_running_loop().create_task(self._drain(), name="ws-pong")

    def close(self) -> None:
        if self._draining is not None:
            self._draining.cancel()
            self._draining = None

    def _write(self, payload: bytes) -> None:
        transport = self._request.transport
        if self._ws.closed or transport is None or transport.is_closing():
            return  # (a close went out: no frame after it)
        transport.write(frame_header(WSMsgType.PONG, len(payload)) + payload)

    async def _drain(self) -> None:
        try:
            while self._request.protocol.writing_paused:
                await taken(self._request.writer.drain(), self._grace, self._abort)
                payload, self._newest = self._newest, None
                if payload is None:
                    break
                self._write(payload)
        except ConnectionError:  # dropped, or gone: the reading loop ends with the close
            pass
        finally:
            self._draining = None  # (whatever ended it: the next ping is answered, not only kept)
