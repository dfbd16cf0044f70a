"""The WebSocket handshake both socket routes share (`/ws`, `WS /v1/audio/speech/stream`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Protocol

from aiohttp import WSCloseCode, web

from ..app_keys import CLOSING_SOCKETS_KEY, SETTINGS_KEY
from ..config import Settings
from ..errors import SHUTTING_DOWN_REASON
from .burst import Burst
from .masked_frames import MaskedFramesResponse
from .pong_wait import AckWatch

log = logging.getLogger(__name__)


class OpenSocket(Protocol):
    """A WebSocket session the shutdown tells and closes (`/ws`, `/v1/audio/speech/stream`)."""

    async def going_away(self) -> bool:
        """Tell and close it (1001); whether a request still running on it was ended."""
        ...


class OpenSockets:
    """The WebSocket sessions open now, told and closed (1001) together at shutdown, after the drain.

    Once closed, a session that opens later (its handshake accepted before the listener closed, its
    handler run only now) is told at once, instead of serving refusals until aiohttp cuts it (1006)."""

    def __init__(self) -> None:
        self._open: set[OpenSocket] = set()
        self._late: set[asyncio.Task[bool]] = set()
        self.closed = False

    def add(self, session: OpenSocket) -> None:
        self._open.add(session)
        if self.closed:
            task = asyncio.get_running_loop().create_task(session.going_away(), name="late-going-away")
            self._late.add(task)
            task.add_done_callback(self._late.discard)

    def discard(self, session: OpenSocket) -> None:
        self._open.discard(session)

    def __len__(self) -> int:
        return len(self._open)

    async def close_all(self) -> tuple[int, int]:
        """Tell and close every open session at once: (how many were open, how many of them had a
        request still running, ended by it), so the shutdown's line says which happened."""
        self.closed = True
        sessions = [*self._open]
        ended = await asyncio.gather(*(session.going_away() for session in sessions))
        return len(sessions), sum(ended)


async def open_socket(
    request: web.Request, headers: Mapping[str, str] | None = None
) -> web.WebSocketResponse:
    """The prepared socket: no compression (PCM barely compresses and the CPU is the engine's), pings
    every heartbeat interval (a peer that vanished without closing is dropped, its request cancelled).
    Its handler reads it through `message_deadline.messages`, which answers the peer's pings.

    A handshake aiohttp cannot read (a `Sec-WebSocket-Key` that is not ASCII raises ValueError in its
    base64 check; an Upgrade or Connection header holding a byte that is not UTF-8, UnicodeEncodeError in
    its refusal quoting it) is the caller's 400 naming the header, not an internal error nor Python's words. Only RFC 6455's version 13 is spoken:
    aiohttp also took the drafts' 8 and 7 (whose browsers sent `Sec-WebSocket-Origin`, not the `Origin`
    the access rules check); a refusal of the version names the one spoken in `Sec-WebSocket-Version`
    (RFC 6455 §4.2.2, §4.4), which aiohttp's 400 left out. An upgrade over HTTP/1.0 is refused (aiohttp
    took it); unmasked client frames close the socket with 1002 (`masked_frames`)."""
    if request.version < (1, 1):  # RFC 6455 §4.1: the upgrade is an HTTP/1.1 request (aiohttp took 1.0)
        raise _refused(request, "HTTP/1.0")
    version = request.headers.get("Sec-WebSocket-Version")
    if version is not None and version != WEBSOCKET_VERSION:
        raise _refused(request, "Unsupported version")
    settings = request.app[SETTINGS_KEY]
    ws = MaskedFramesResponse(
        compress=False,
        max_msg_size=settings.max_body_bytes,
        heartbeat=settings.heartbeat_interval or None,
        autoping=False,  # pings are answered by `message_deadline.messages`, which counts them apart
    )
    if headers:  # (the 101's own: the OpenAI stream socket's `x-request-id`)
        ws.headers.update(headers)
    try:
        await ws.prepare(request)
    except UnicodeEncodeError:  # aiohttp's refusal quoted Upgrade or Connection, holding a non-UTF-8 byte
        upgrade = request.headers.get("Upgrade", "").strip().lower()
        raise _refused(
            request, "No CONNECTION" if upgrade == "websocket" else "No WebSocket UPGRADE"
        ) from None
    except ValueError:  # a key that is not ASCII (the words were Python's, not naming the header)
        raise _refused(request, "Handshake error") from None
    except web.HTTPBadRequest as exc:
        raise _refused(request, exc.text or "") from None
    return ws


WEBSOCKET_VERSION = "13"  # RFC 6455's, the one both socket routes speak


def _refused(request: web.Request, said: str) -> web.HTTPBadRequest:
    """The 400 for a handshake aiohttp refused (`said`: its words); a version's names the one spoken."""
    version_refused = said.startswith("Unsupported version")
    return web.HTTPBadRequest(
        text=_handshake_refusal(request, said),
        headers={"Sec-WebSocket-Version": WEBSOCKET_VERSION} if version_refused else None,
    )


def _handshake_refusal(request: web.Request, said: str) -> str:
    """aiohttp's refusal of a handshake, naming the header at fault ("Handshake error: None" did not)."""
    if said.startswith("Handshake error"):
        key = request.headers.get("Sec-WebSocket-Key")
        if key is None:
            return "invalid WebSocket handshake: the Sec-WebSocket-Key header is missing"
        return f"invalid WebSocket handshake: Sec-WebSocket-Key {key[:40]!r} is not 16 bytes in base64"
    if said.startswith("Unsupported version"):
        version = request.headers.get("Sec-WebSocket-Version")
        if version is None:
            return f"invalid WebSocket handshake: the Sec-WebSocket-Version header ({WEBSOCKET_VERSION}) is missing"
        return (
            f"invalid WebSocket handshake: Sec-WebSocket-Version {version[:20]!r} is not supported "
            f"({WEBSOCKET_VERSION} is)"
        )
    if said == "HTTP/1.0":
        return f"invalid WebSocket handshake: it came as HTTP/{request.version.major}.{request.version.minor}, not HTTP/1.1"
    if said.startswith("No CONNECTION"):
        return "invalid WebSocket handshake: the Connection header does not say Upgrade"
    if said.startswith("No WebSocket UPGRADE"):
        return "invalid WebSocket handshake: the Upgrade header does not say websocket"
    return f"invalid WebSocket handshake: {' '.join(said.split())}"


UNREAD_GRACE_SECONDS = 1.0  # a socket's handler has ended: what its peer gets to take what is still unsent
LET_GO_SECONDS = 5.0  # ... at most, all told, while it takes some in each UNREAD_GRACE_SECONDS
SENT_POLL_SECONDS = 0.02  # a refusing close waits for its frame to go out: how often it looks
SEND_GRACE_HEARTBEATS = 1.5  # a frame's send may wait this many heartbeat intervals for the peer
GOING_AWAY_SECONDS = 1.0  # at shutdown: what a socket gets to take its request's last events, then its close
GOING_AWAY_MESSAGE = SHUTTING_DOWN_REASON.encode()  # (the 1001 close's reason: 123 bytes at most)


def send_grace(settings: Settings) -> float:
    """How long a socket's send waits for a peer that takes nothing before it is dropped: the heartbeat's
    interval and the half it gives a pong (the one figure the session, its pongs and the OpenAI stream use)."""
    return SEND_GRACE_HEARTBEATS * settings.heartbeat_interval


UNTAKEN_REASON = "the peer took nothing of a frame for {:g} s"


def drop_untaken(request: web.Request, ws: web.WebSocketResponse, grace: float) -> Callable[[], None]:
    """How `taken` drops a peer that took nothing for `grace` seconds: the close frame (1008, saying
    so) goes out behind what was sent and the connection ends within REFUSAL_CLOSE_SECONDS
    (`ClosingSockets.close_refusing`). A cut alone left a peer whose receive window was still open (a
    slow link, a tab busy for a moment) a bare 1006; one that reads nothing is cut a second later."""
    closing = request.app[CLOSING_SOCKETS_KEY]
    reason = UNTAKEN_REASON.format(grace)
    return lambda: closing.close_refusing(request, ws, WSCloseCode.POLICY_VIOLATION, reason)


async def taken(
    send: Awaitable[None], grace: float, abort: Callable[[], object], transport: Any = None
) -> None:
    """Await one frame's send (it waits while the peer's buffers are full); a peer that has taken
    nothing for `grace` seconds is dropped (`abort`: `drop_untaken`): ConnectionResetError. The
    heartbeat alone misses a peer that never reads but keeps sending (any data it sends puts the ping
    off), and a sender would wait on it for ever, holding its request's audio. Given the `transport`,
    a peer whose kernel acknowledged more of what was sent within each grace is still taking
    (`pong_wait.AckWatch`): a slow reader with megabytes queued ahead of the send was dropped."""
    watch = AckWatch()
    if transport is None or not watch.start(transport):
        try:
            async with asyncio.timeout(grace):
                await send
        except TimeoutError:
            abort()
            raise ConnectionResetError(f"the peer took nothing for {grace:g} s") from None
        return
    sending = asyncio.ensure_future(send)
    try:
        while not (await asyncio.wait({sending}, timeout=grace))[0]:
            if not watch.still_taking(transport):
                abort()
                raise ConnectionResetError(f"the peer took nothing for {grace:g} s")
        sending.result()
    finally:
        if not sending.done():
            sending.cancel()
        elif not sending.cancelled():
            sending.exception()  # read: a send that failed as this wait was cancelled was logged unread


async def write_burst(
    request: web.BaseRequest,
    ws: web.WebSocketResponse,
    burst: Burst,
    grace: float,
    abort: Callable[[], object],
) -> None:
    """The frames a burst holds in one write (`burst.py`), as aiohttp's writer would have made them one by
    one; then, only if the peer's buffers are full, the wait for it to take them, under `taken`'s
    deadline (no timer per write otherwise). Both sockets' pumps send this way."""
    transport = request.transport
    if ws.closed or transport is None or transport.is_closing():
        raise ConnectionResetError("Cannot write to closing transport")  # (as aiohttp's writer)
    transport.write(burst.take())
    if request.protocol.writing_paused:
        await taken(request.writer.drain(), grace, abort, transport)


async def going_away_step(step: Awaitable[object], seconds: float = GOING_AWAY_SECONDS) -> None:
    """One step of a socket's goodbye at shutdown (its last `error`, its close), bounded: given up after
    `seconds`, or once the socket is gone. A peer that reads nothing waits for no one."""
    with contextlib.suppress(TimeoutError, ConnectionError, RuntimeError):
        async with asyncio.timeout(seconds):
            await step


async def close_going_away(ws: web.WebSocketResponse) -> None:
    """Close with 1001 (going away) at shutdown, bounded: a peer that reads nothing waits for no one.
    Its connection, its close still unsent, is cut then: asyncio's close waited for the peer to take
    it, and the shutdown waited on the connection's handler, up to aiohttp's shutdown timeout (60 s)."""
    await going_away_step(ws.close(code=WSCloseCode.GOING_AWAY, message=GOING_AWAY_MESSAGE))
    request = getattr(ws, "_req", None)  # (aiohttp's: the request the socket was opened on)
    transport = request.transport if isinstance(request, web.BaseRequest) else None
    if transport is not None and transport.get_write_buffer_size():
        transport.abort()


REFUSAL_CLOSE_SECONDS = 1.0  # a socket closed for its message: how long it may take to go, all told
# Connections lingering at once, at most: each holds a descriptor outside --max-connections (an oversized
# frame's header, a few bytes, fails a socket), so past this a failed one closes at once, as before.
MAX_LINGERING = 64


class ClosingSockets:
    """The connections this app is closing for their message: the bounded closes in flight and the
    duplicates of their sockets that linger meanwhile (MAX_LINGERING at most). Each app holds its own
    (`CLOSING_SOCKETS_KEY`: two apps in one process share no bound), and its clean-up (`close`) ends
    them, so no task or socket outlives it."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()  # (held while they run: the loop keeps weak refs)
        self._lingering: set[socket.socket] = set()  # every duplicate held (the bound, the clean-up)
        self._let_go: set[socket.socket] = set()  # of those, the ones whose own connection has gone
        self._closed = False

    @property
    def lingering(self) -> int:
        """How many connections linger now, past their close frame (`/metrics`): one whose close frame
        still waits is the guard's open connection, and was counted twice in the open gauge."""
        return len(self._let_go)

    def close_refusing(
        self, request: web.BaseRequest, ws: web.WebSocketResponse, code: int, reason: str
    ) -> None:
        """Close the socket from outside its handler (a timer, the body budget), saying why: nothing more
        of its message is kept, the close frame with `code` and `reason` goes out at once, and the
        connection ends within REFUSAL_CLOSE_SECONDS (RFC 6455 §7.1.7, failing the connection: the peer's
        answer is not awaited). A cut alone left the peer a bare 1006, a refusal it could not tell from a
        network fault. aiohttp's close may run beside the handler's `receive`: it ends that (CLOSING) once
        its frame is written, and the handler's own close then does nothing.

        The connection lingers meanwhile (`_linger`): a peer cannot stop mid-frame, and a socket closed
        while it still sends answers with a reset, which can reach it before it has read the close frame
        (Chromium then reports 1006 all the same)."""
        if self._closed:  # the app is gone: nothing is left to say it with
            abort_connection(request)
            return
        if request.transport is not None:
            request.transport.pause_reading()  # aiohttp reads no more (its flow control resumes only its own)
        self._hold(self._close_refusing(request, ws, code, reason, self._duplicate(request)))

    def linger_failed(self, request: web.BaseRequest) -> None:
        """aiohttp has failed the socket (a message over `--max-body-bytes`: 1009, or a protocol error):
        its close frame is written and its transport closed, while the peer may still be sending the
        frame. Called at once (before the loop's next turn closes the descriptor), the connection lingers
        as a refused one does; without it the reset beat the close frame (Chromium heard 1006)."""
        if (lingering := self._duplicate(request)) is not None:
            self._start_linger(lingering, asyncio.get_running_loop().time() + REFUSAL_CLOSE_SECONDS)

    async def close(self) -> None:
        """App clean-up: the closes in flight end and the lingering connections close now."""
        self._closed = True
        while self._tasks:
            tasks = [*self._tasks]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        # A task cancelled before its first step never ran its `finally`: its duplicate stayed open.
        for sock in self._lingering:
            sock.close()
        self._lingering.clear()
        self._let_go.clear()

    def _hold(self, coroutine: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _duplicate(self, request: web.BaseRequest) -> socket.socket | None:
        """A duplicate of the connection's socket: the connection outlives aiohttp's close of its own
        (none past MAX_LINGERING, none once the app is closed)."""
        transport = request.transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        if sock is None or self._closed or len(self._lingering) >= MAX_LINGERING:
            return None
        try:
            lingering = sock.dup()
        except OSError:  # out of descriptors: closed at once, as before
            return None
        lingering.setblocking(False)
        self._lingering.add(lingering)
        return lingering

    def _start_linger(self, sock: socket.socket, deadline: float) -> None:
        if self._closed:  # (a close cancelled by the clean-up: the connection goes with the app)
            self._lingering.discard(sock)
            sock.close()
        else:
            self._let_go.add(sock)
            self._hold(self._linger(sock, deadline))

    async def _close_refusing(
        self,
        request: web.BaseRequest,
        ws: web.WebSocketResponse,
        code: int,
        reason: str,
        lingering: socket.socket | None,
    ) -> None:
        deadline = asyncio.get_running_loop().time() + REFUSAL_CLOSE_SECONDS
        try:
            async with asyncio.timeout_at(deadline):
                await ws.close(code=code, message=reason.encode()[:123])  # (RFC 6455: 123 bytes at most)
                # (a close beside the handler's `receive` returns once its frame is queued: a peer that
                # reads goes on taking what was sent before it, the close frame last)
                await sent(request.transport)
        except (TimeoutError, ConnectionError, RuntimeError):
            pass
        finally:
            transport = request.transport  # (None once the connection is gone)
            if transport is not None and (not transport.is_closing() or transport.get_write_buffer_size()):
                transport.abort()  # unanswered, or its close still unsent: asyncio's close would wait for ever
            if lingering is not None:
                self._start_linger(lingering, deadline)

    async def _linger(self, sock: socket.socket, deadline: float) -> None:
        """Read and drop what the peer still sends until it ends the connection or `deadline`, then close
        (with nothing unread, a plain FIN): the peer reads the close frame before the connection goes."""
        loop = asyncio.get_running_loop()
        try:
            with sock, contextlib.suppress(TimeoutError, OSError):
                async with asyncio.timeout_at(deadline):
                    while await loop.sock_recv(sock, 65536):
                        pass
        finally:
            self._lingering.discard(sock)
            self._let_go.discard(sock)


async def sent(transport: asyncio.BaseTransport | None) -> None:
    """Return once what was written to `transport` has gone to the kernel (or it is gone)."""
    while isinstance(transport, asyncio.WriteTransport) and transport.get_write_buffer_size():
        await asyncio.sleep(SENT_POLL_SECONDS)


def abort_connection(request: web.BaseRequest) -> None:
    """Drop the connection at once, with whatever it still holds for the peer."""
    transport = request.transport
    if transport is not None:
        transport.abort()


def let_go(request: web.BaseRequest) -> None:
    """The socket's handler has ended. A peer that has taken nothing of what was written to it within
    UNREAD_GRACE_SECONDS is cut: asyncio's close waits for unsent data to go out, so a peer that reads
    nothing, even one the heartbeat found silent and closed, kept its connection, its buffers and its
    place under `--max-connections` for as long as it kept the TCP connection open. One that takes some
    in each grace gets up to LET_GO_SECONDS for the rest, its close frame last (it was cut after one
    grace, its close frame unsent: a bare 1006)."""
    transport = request.transport
    if transport is not None and (left := transport.get_write_buffer_size()):
        loop = asyncio.get_running_loop()
        loop.call_later(UNREAD_GRACE_SECONDS, _abort_if_unread, transport, left, loop.time() + LET_GO_SECONDS)


def _abort_if_unread(transport: asyncio.Transport, before: int, until: float) -> None:
    left = transport.get_write_buffer_size()
    if not left:
        return
    loop = asyncio.get_running_loop()
    if left < before and loop.time() < until:  # it reads, if slowly
        loop.call_later(UNREAD_GRACE_SECONDS, _abort_if_unread, transport, left, until)
    else:
        transport.abort()
