"""One WebSocket connection: decode client messages, run at most one request, stream its events and PCM
(the request's pump: `request_stream.py`).

The connection is a view over a preview job of the scheduler: the job's log entries become JSON text
frames, its audio chunks become binary PCM frames cut to the growing schedule. Every send is awaited
(aiohttp's writer waits for the transport to drain), so a reader that stops reading stops this pump;
the audio then piles up in the scheduler's subscription, whose bound drops the slow consumer and
cancels the job, and a send the peer does not take within 1.5 heartbeat intervals drops the connection
(a peer that reads nothing but keeps sending is never found by the heartbeat). Leaving (cancel message, socket closed, send failed) always cancels the job, closes
the subscription and ends the pump (its task, or the pump parked with none), so nothing outlives the
connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import WSCloseCode, WSMsgType, web

from ..config import Settings
from ..incidents import internal_error
from ..jobs.model import Job
from ..jobs.subscription import Subscription
from ..protocol import (
    BatchRequest,
    Busy,
    CancelRequest,
    Limits,
    NotRunning,
    SectionError,
    WorkerError,
)
from ..ws_messages import parse_ws_message
from .burst import Burst
from .chunking import schedule_sizes
from .opening import GOING_AWAY_SECONDS, close_going_away, send_grace, taken, write_burst
from .request_stream import RequestStream

if TYPE_CHECKING:
    from ..jobs.scheduler import Scheduler
    from .standing import Standing

log = logging.getLogger(__name__)

# Audio made for a request and not yet sent that its listener may hold (as a download may): an engine
# far faster than the link (espeak-ng, ~400 times real time) ran 30 s ahead of a reader taking every frame
# on a 4 MB/s link, which was cut as a slow consumer. A reader that stops is dropped by the frame-send
# grace (`opening.taken`), and all listeners together by the worker-wide unread budget.
UNREAD_SECONDS = 600.0


def decode_message(text: str, limits: Limits) -> BatchRequest | CancelRequest:
    """A client text frame to a typed message; BadRequest/UnknownMessage name what is wrong."""
    return parse_ws_message(text, limits)


def error_event(error: WorkerError) -> bytes:
    """A request-level problem (bad message, Busy, QueueFull...): an `error` event with no idx."""
    return SectionError(idx=None, error=str(error)).encode()


class WsSession:
    """State of one socket: the sender (one frame at a time) and the request running on it, if any."""

    def __init__(
        self,
        request: web.BaseRequest,
        ws: web.WebSocketResponse,
        scheduler: Scheduler,
        settings: Settings,
        limits: Limits,
        standing: Standing,
        count_error: Callable[[str], object] | None = None,
        abort: Callable[[], object] | None = None,
    ):
        self._request, self._ws = request, ws  # (the request's transport and writer: `send_burst`)
        self._protocol = request.protocol  # (its connection's: `writable_now` reads it a hand-over)
        # A peer that takes nothing of a frame for this long is gone, as one that answers no ping is (the
        # heartbeat's interval plus the half it gives a pong): its connection is dropped (`abort`). The
        # heartbeat alone misses a peer that never reads but keeps sending (any data it sends puts the
        # ping off), and the pump would wait on it for ever, holding its job's audio.
        self._send_grace = send_grace(settings)
        self._abort = abort or (lambda: None)
        # /metrics: a request-level `error` (a refusal, a failed stream) is no answer nor job event
        self._count_error = count_error or (lambda error: None)
        self._scheduler = scheduler
        self._settings = settings
        self._limits = limits
        self._send_lock = asyncio.Lock()
        self._draining: asyncio.Future[None] | None = None  # (`write_now`'s wait on a full peer)
        self._last_sent = time.monotonic()
        self._heartbeat_interval = settings.heartbeat_interval
        self._heartbeat: asyncio.TimerHandle | None = None  # when a running request's may be due
        self._watched_from = 0.0  # when the running request began to be watched (its start)
        self._stream: RequestStream | None = None
        self._frame_sizes: tuple[int, tuple[int, ...]] = (0, ())  # (sample rate, its frames' sizes)
        # The connection guard's view: idle (may be closed to admit another connection) or in use.
        self._standing = standing
        standing.idle()

    # -- sending -----------------------------------------------------------------------------------

    async def send_json(self, body: bytes) -> None:
        """One text frame: an encoded event (a log entry's bytes are shared with its other listeners)."""
        async with self._send_lock:
            await self._taken(self._ws.send_frame(body, WSMsgType.TEXT))

    async def send_burst(self, burst: Burst) -> None:
        """The frames a burst holds in one write (`opening.write_burst`)."""
        async with self._send_lock:
            await write_burst(self._request, self._ws, burst, self._send_grace, self._abort)
            self._last_sent = time.monotonic()

    def writable_now(self) -> bool:
        """Whether a burst written now goes out at once: no send in flight, the peer's buffers not full."""
        transport = self._protocol.transport
        return not (
            self._send_lock.locked()
            or self._ws.closed
            or transport is None
            or transport.is_closing()
            or self._protocol.writing_paused
        )

    def write_now(self, burst: Burst) -> bool:
        """The burst in one write, with no wait (`writable_now` said it goes out at once); whether the
        next one would too (`writable_now`'s answer after it, without asking it again: ≈ 7 Python calls
        a `/ws` preview; SERVER_OVERHEAD.md, stop 55). If it filled the peer's buffers, a task holds the
        send lock while it waits for the peer under the send deadline, as `send_burst` would have: a
        peer that never reads is dropped even when this burst was its request's last (the pump, woken
        with nothing left to send, waits for nothing)."""
        transport = self._protocol.transport
        assert transport is not None
        transport.write(burst.take())
        self._last_sent = time.monotonic()
        if self._protocol.writing_paused:
            self._draining = asyncio.ensure_future(self._drained_under_deadline())
            return False
        return not transport.is_closing()  # (a failed write closes it; the lock is free, the ws open)

    async def _drained_under_deadline(self) -> None:
        async with self._send_lock:  # (`writable_now` is False, and the pump's sends wait, meanwhile)
            with contextlib.suppress(ConnectionError, RuntimeError):  # dropped, or gone: said elsewhere
                await self._taken(self._request.writer.drain(), self._request.transport)

    async def _taken(self, send: Awaitable[None], transport: Any = None) -> None:
        """Await one frame's send; a peer that has taken nothing for `_send_grace` seconds is dropped
        (given the `transport`, only once its kernel acknowledged nothing more either: a drain behind
        megabytes queued; an event's send, small and seldom waiting, keeps the cheaper wait)."""
        await taken(send, self._send_grace, self._abort, transport)
        self._last_sent = time.monotonic()

    async def send_error(self, error: WorkerError) -> None:
        """A request-level `error` event (no idx), counted in /metrics."""
        await self.send_json(self.counted_error(error))

    def counted_error(self, error: WorkerError) -> bytes:
        """A request-level `error` event to send, counted in /metrics now."""
        self._count_error(str(error))
        return error_event(error)

    async def fail(self, error: WorkerError) -> None:
        """An internal failure mid-stream: say so, then close with 1011 (the stream is no longer whole)."""
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.send_error(error)
            await self._ws.close(code=WSCloseCode.INTERNAL_ERROR, message=b"internal error")

    # -- a running request's heartbeat: one timer a connection, not one a request. A request's own,
    # armed at its start and cancelled at its end, left a cancelled handle in the loop's timer heap a
    # preview (≈ 19 comparisons there a preview, and the arm and cancel; SERVER_OVERHEAD.md, stop 53).
    # This one lapses when it fires with no request running; the next request arms it again.

    def watch_heartbeat(self, again: bool = False) -> None:
        """A `heartbeat` for the running request once nothing was sent for the interval since its start
        or its last frame, whichever is later; `again`: after one was sent."""
        if not again:
            self._watched_from = time.monotonic()
        if self._heartbeat is None and self._heartbeat_interval > 0:
            self._arm_heartbeat(self._heartbeat_interval)

    def _arm_heartbeat(self, delay: float) -> None:
        self._heartbeat = asyncio.get_running_loop().call_later(delay, self._heartbeat_due)

    def _heartbeat_due(self) -> None:
        self._heartbeat = None
        stream = self._stream
        if stream is None:  # (the request has ended: the timer lapses)
            return
        idle = time.monotonic() - max(self._last_sent, self._watched_from)
        if idle < self._heartbeat_interval:  # something went out meanwhile
            self._arm_heartbeat(self._heartbeat_interval - idle)
        else:
            stream.send_heartbeat()

    # -- client messages ---------------------------------------------------------------------------

    async def on_text(self, text: str, received_at: float) -> None:
        """Handle one client text frame; every problem becomes an `error` event, never a close."""
        self._standing.in_use()
        try:
            message = decode_message(text, self._limits)
            if isinstance(message, CancelRequest):
                self._cancel()
            else:
                await self._start(message, received_at)
        except WorkerError as error:
            await self.send_error(error)
        except Exception as exc:  # noqa: BLE001 - the connection survives a request that could not start
            await self.send_error(internal_error(log, exc, "starting a WebSocket request"))
        finally:
            if self._stream is None:
                self._standing.idle()

    async def _start(self, request: BatchRequest, received_at: float) -> None:
        if self._stream is not None:
            raise Busy("this connection already runs a request; cancel it or wait for its done event")
        info = self._scheduler.info
        sample_rate = info.sample_rate if info is not None else 24000  # None: submit raises Loading
        if self._frame_sizes[0] != sample_rate:  # (once a connection: six calls a request, stop 54)
            self._frame_sizes = (sample_rate, schedule_sizes(self._settings.chunk_schedule_ms, sample_rate))
        frame_sizes = self._frame_sizes[1]
        job, subscription = await self._submit_listening(request)
        self._stream = RequestStream(
            self,
            self._scheduler,
            job,
            subscription,
            sample_rate=sample_rate,
            frame_sizes=frame_sizes,
            received_at=received_at,
        )
        self._stream.start()

    async def _submit_listening(self, request: BatchRequest) -> tuple[Job, Subscription]:
        """Subscribe before the job can run: audio chunks are not in the job's log, so a listener that
        attached after the worker thread picked the job up would miss them."""
        listeners: list[Subscription] = []

        def listen(job: Job) -> None:
            job.pcm16_listener = request.audio
            listeners.append(
                self._scheduler.subscribe(
                    job, after=0, audio=request.audio, max_buffered_seconds=UNREAD_SECONDS
                )
            )

        try:
            job = await self._scheduler.submit(
                request, preview=True, trim_leading_silence=True, on_created=listen
            )
        except BaseException:
            for subscription in listeners:
                subscription.close()
            raise
        return job, listeners[0]

    def _cancel(self) -> None:
        if self._stream is None or not self._stream.cancel():
            raise NotRunning("no request is running on this connection")

    def stream_ended(self, stream: RequestStream) -> None:
        if self._stream is stream:
            self._stream = None
            self._standing.idle()

    async def close(self) -> None:
        """The socket is gone: stop the request and wait until its pump has ended."""
        stream = self._stream
        if stream is not None:
            await stream.stop()
        if self._draining is not None:
            self._draining.cancel()
        if self._heartbeat is not None:
            self._heartbeat.cancel()

    async def going_away(self) -> bool:
        """Shutdown, after the drain: nothing more will run here before the restart. A request still
        running ends with an `error` (QueueFull: shutting down) and its `done`; then the socket closes
        with 1001, so the client knows to send again later instead of waiting on a silent socket that
        aiohttp would cut (1006) seconds later. Each step is bounded: a peer that reads nothing waits
        for no one."""
        stream = self._stream
        ended = stream is not None and await stream.end_for_shutdown(GOING_AWAY_SECONDS)
        await close_going_away(self._ws)
        return ended
