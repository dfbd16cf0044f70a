"""One WebSocket connection: decode client messages, run at most one request, stream its events and PCM.

The connection is a view over a preview job of the scheduler: the job's log entries become JSON text
frames, its audio chunks become binary PCM frames cut to the growing schedule. Every send is awaited
(aiohttp's writer waits for the transport to drain), so a reader that stops reading stops this pump;
the audio then piles up in the scheduler's subscription, whose bound drops the slow consumer and
cancels the job, and a send the peer does not take within 1.5 heartbeat intervals drops the connection
(a peer that reads nothing but keeps sending is never found by the heartbeat). Leaving (cancel message, socket closed, send failed) always cancels the job, closes
the subscription and ends the pump task, so nothing outlives the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from aiohttp import WSCloseCode, WSMsgType, web

from ..audio import to_pcm16
from ..config import Settings
from ..jobs.model import AudioChunk, Job, LogEntry
from ..jobs.subscription import Subscription
from ..protocol import (
    AudioEnd,
    AudioStart,
    BatchRequest,
    Busy,
    CancelRequest,
    Done,
    EngineError,
    FirstAudio,
    Heartbeat,
    Limits,
    NotRunning,
    Progress,
    QueueFull,
    SectionError,
    WorkerError,
    parse_ws_message,
)
from .chunking import GrowingChunker, schedule_sizes
from .opening import GOING_AWAY_SECONDS, SEND_GRACE_HEARTBEATS, close_going_away, going_away_step, taken

if TYPE_CHECKING:
    from ..jobs.scheduler import Scheduler
    from .standing import Standing

log = logging.getLogger(__name__)

# Audio made for a request and not yet sent that its listener may hold (as a download may): an engine
# far faster than the link (espeak-ng, ~400 times real time) ran 30 s ahead of a reader taking every frame
# on a 4 MB/s link, which was cut as a slow consumer. A reader that stops is dropped by the frame-send
# grace (`opening.taken`), and all listeners together by the worker-wide unread budget.
UNREAD_SECONDS = 600.0
UNHEARD_KEEP_SECONDS = 1.0  # sent frames remembered while the onset is unknown (it is found within ~70 ms)


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
        ws: web.WebSocketResponse,
        scheduler: Scheduler,
        settings: Settings,
        limits: Limits,
        standing: Standing,
        count_error: Callable[[str], object] | None = None,
        abort: Callable[[], object] | None = None,
    ):
        self._ws = ws
        # A peer that takes nothing of a frame for this long is gone, as one that answers no ping is (the
        # heartbeat's interval plus the half it gives a pong): its connection is dropped (`abort`). The
        # heartbeat alone misses a peer that never reads but keeps sending (any data it sends puts the
        # ping off), and the pump would wait on it for ever, holding its job's audio.
        self._send_grace = SEND_GRACE_HEARTBEATS * settings.heartbeat_interval
        self._abort = abort or (lambda: None)
        # /metrics: a request-level `error` (a refusal, a failed stream) is no answer nor job event
        self._count_error = count_error or (lambda error: None)
        self._scheduler = scheduler
        self._settings = settings
        self._limits = limits
        self._send_lock = asyncio.Lock()
        self._last_sent = time.monotonic()
        self._stream: RequestStream | None = None
        # The connection guard's view: idle (may be closed to admit another connection) or in use.
        self._standing = standing
        standing.idle()

    # -- sending -----------------------------------------------------------------------------------

    async def send_json(self, body: bytes) -> None:
        """One text frame: an encoded event (a log entry's bytes are shared with its other listeners)."""
        async with self._send_lock:
            await self._taken(self._ws.send_frame(body, WSMsgType.TEXT))

    async def send_pcm(self, pcm: bytes) -> None:
        async with self._send_lock:
            await self._taken(self._ws.send_bytes(pcm))

    async def _taken(self, send: Awaitable[None]) -> None:
        """Await one frame's send; a peer that has taken nothing for `_send_grace` seconds is dropped."""
        await taken(send, self._send_grace, self._abort)
        self._last_sent = time.monotonic()

    async def send_error(self, error: WorkerError) -> None:
        """A request-level `error` event (no idx), counted in /metrics."""
        self._count_error(str(error))
        await self.send_json(error_event(error))

    async def fail(self, error: WorkerError) -> None:
        """An internal failure mid-stream: say so, then close with 1011 (the stream is no longer whole)."""
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.send_error(error)
            await self._ws.close(code=WSCloseCode.INTERNAL_ERROR, message=b"internal error")

    @property
    def idle_seconds(self) -> float:
        return time.monotonic() - self._last_sent

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
            log.exception("WebSocket request could not start")
            self._count_error(f"{type(exc).__name__}: {exc}")
            await self.send_json(SectionError(idx=None, error=f"{type(exc).__name__}: {exc}").encode())
        finally:
            if self._stream is None:
                self._standing.idle()

    async def _start(self, request: BatchRequest, received_at: float) -> None:
        if self._stream is not None:
            raise Busy("this connection already runs a request; cancel it or wait for its done event")
        info = self._scheduler.info
        sample_rate = info.sample_rate if info is not None else 24000  # None: submit raises Loading
        frame_sizes = schedule_sizes(self._settings.chunk_schedule_ms, sample_rate)
        job, subscription = await self._submit_listening(request)
        self._stream = RequestStream(
            self,
            self._scheduler,
            job,
            subscription,
            sample_rate=sample_rate,
            frame_sizes=frame_sizes,
            received_at=received_at,
            heartbeat_interval=self._settings.heartbeat_interval,
        )
        self._stream.start()

    async def _submit_listening(self, request: BatchRequest) -> tuple[Job, Subscription]:
        """Subscribe before the job can run: audio chunks are not in the job's log, so a listener that
        attached after the worker thread picked the job up would miss them."""
        listeners: list[Subscription] = []

        def listen(job: Job) -> None:
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

    async def going_away(self) -> None:
        """Shutdown, after the drain: nothing more will run here before the restart. A request still
        running ends with an `error` (QueueFull: shutting down) and its `done`; then the socket closes
        with 1001, so the client knows to send again later instead of waiting on a silent socket that
        aiohttp would cut (1006) seconds later. Each step is bounded: a peer that reads nothing waits
        for no one."""
        stream = self._stream
        if stream is not None:
            await stream.end_for_shutdown(GOING_AWAY_SECONDS)
        await close_going_away(self._ws)


@dataclass(frozen=True)
class SentFrame:
    """Where a frame sits in the request's stream (samples) and when it went out."""

    start: int
    end: int
    sent_at: float
    idx: int


class RequestStream:
    """The pump of one request: subscription items → text and binary frames, in log order."""

    def __init__(
        self,
        session: WsSession,
        scheduler: Scheduler,
        job: Job,
        subscription: Subscription,
        *,
        sample_rate: int,
        frame_sizes: tuple[int, ...],
        received_at: float,
        heartbeat_interval: float,
    ) -> None:
        self._session = session
        self._scheduler = scheduler
        self.job = job
        self._sample_rate = sample_rate
        self._received_at = received_at
        self._heartbeat_interval = heartbeat_interval
        self._chunker = GrowingChunker(frame_sizes)
        self._onset_at: int | None = None  # stream position of the audible onset, told by the engine thread
        self._first_audio_sent = False
        self._unheard: list[SentFrame] = []  # frames sent while `first_audio` is still to come
        self._fed_samples = 0
        self._stream_samples = 0
        self._subscription = subscription
        self._open_idx: int | None = None
        self._section_samples = 0
        self._section_frames = 0
        self._cancelled = False
        self._shutdown_error: WorkerError | None = None  # sent before `done` when the shutdown ended the job
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"ws-job-{self.job.id}")

    def cancel(self) -> bool:
        """Ask the scheduler to stop (once); audio not yet sent is dropped. False if the pump has ended."""
        if self._task is None or self._task.done():
            return False
        if not self._cancelled:
            self._cancelled = True
            self._scheduler.cancel(self.job.id)
        return True

    def _stop_job(self) -> None:
        self._cancelled = True
        self._scheduler.cancel(self.job.id)

    async def stop(self) -> None:
        self.cancel()
        self._subscription.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def end_for_shutdown(self, wait: float) -> None:
        """The worker shuts down: the job is cancelled (its queued sections will not run here), and
        what was made still goes out, then the `error` saying why and the `done`; a pump that has not
        ended within `wait` seconds is stopped."""
        if self._scheduler.cancel(self.job.id):  # else its `done` is on its way: it ended whole
            self._shutdown_error = QueueFull(
                "the worker is shutting down; send the request again once it is back"
            )
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=wait)
        await self.stop()
        if self._shutdown_error is not None:  # no `done` came in time (a Redis queue's cancel is slower)
            await going_away_step(self._session.send_error(self._shutdown_error), wait)

    async def _run(self) -> None:
        heartbeat = asyncio.get_running_loop().create_task(self._heartbeats())
        ended = False
        try:
            async for item in self._subscription:
                if isinstance(item, AudioChunk):
                    await self._on_audio(item)
                elif isinstance(item, LogEntry):
                    await self._on_entry(item)
                    ended = ended or isinstance(item.event, Done)
            if not ended:  # let go without a `done`: the shared queue lost the job, or its engines failed
                log.warning("the job %s of a WebSocket request ended without its done", self.job.id)
                self._stop_job()
                await self._session.fail(self._scheduler.stream_lost(self.job))
        except (ConnectionError, RuntimeError):
            # The socket broke under a send: nobody listens any more, so the work stops.
            self._stop_job()
        except Exception as exc:  # noqa: BLE001 - a started stream reports an error event, then closes
            log.exception("WebSocket stream of job %s failed", self.job.id)
            self._stop_job()
            await self._session.fail(EngineError(f"streaming failed: {type(exc).__name__}: {exc}"))
        finally:
            heartbeat.cancel()
            self._subscription.close()
            self._session.stream_ended(self)

    async def _on_entry(self, entry: LogEntry) -> None:
        event = entry.event
        ends_section = isinstance(event, Progress) and event.status != "synth"
        if (ends_section or isinstance(event, SectionError | Done)) and self._open_idx is not None:
            await self._end_section()
        if isinstance(event, Done) and self._shutdown_error is not None:
            error, self._shutdown_error = self._shutdown_error, None
            await self._session.send_error(error)
        if isinstance(event, Done):
            # Free the connection before `done` goes out: a client may send its next request the
            # moment it reads `done`, and must not get Busy for it.
            self._session.stream_ended(self)
        await self._session.send_json(entry.line)

    async def _on_audio(self, chunk: AudioChunk) -> None:
        if self._cancelled:
            return
        if self._open_idx != chunk.idx:
            if self._open_idx is not None:
                await self._end_section()
            self._open_idx, self._section_samples, self._section_frames = chunk.idx, 0, 0
            await self._session.send_json(AudioStart(idx=chunk.idx, sample_rate=self._sample_rate).encode())
        if chunk.onset is not None and self._onset_at is None:
            self._onset_at = self._fed_samples + chunk.onset
        self._fed_samples += int(chunk.samples.size)
        for frame in self._chunker.feed(chunk.samples):
            await self._send_frame(frame)
        await self._maybe_first_audio()  # the onset may lie in a frame that went out earlier

    async def _end_section(self) -> None:
        """Flush the section's last (short) frame unless cancelled, then `audio_end` with what was sent."""
        rest = self._chunker.flush()
        if rest is not None and not self._cancelled:
            await self._send_frame(rest)
        assert self._open_idx is not None
        end = AudioEnd(idx=self._open_idx, samples=self._section_samples, chunks=self._section_frames)
        self._open_idx = None
        await self._session.send_json(end.encode())

    async def _send_frame(self, frame: np.ndarray) -> None:
        await self._session.send_pcm(to_pcm16(frame).astype("<i2").tobytes())
        sent_at = time.monotonic()
        assert self._open_idx is not None
        start, self._stream_samples = self._stream_samples, self._stream_samples + int(frame.size)
        self._section_samples += int(frame.size)
        self._section_frames += 1
        if not self._first_audio_sent:
            self._unheard.append(SentFrame(start, self._stream_samples, sent_at, self._open_idx))
            await self._maybe_first_audio()

    async def _maybe_first_audio(self) -> None:
        """`first_audio` once the frame holding the onset has gone out; `ttfa_ms` is when it did.

        The engine thread found the onset (it needs a little audio after it, so the news can come with
        a later chunk than the one holding it); this only maps it onto the frames that were sent.
        """
        if self._first_audio_sent or not self._unheard:
            return
        if self._onset_at is None:
            horizon = self._stream_samples - int(UNHEARD_KEEP_SECONDS * self._sample_rate)
            self._unheard = [f for f in self._unheard if f.end > horizon]
            return
        carrier = next((f for f in self._unheard if self._onset_at < f.end), None)
        if carrier is None:  # its frame is still in the chunker
            return
        self._first_audio_sent = True
        self._unheard = []
        ttfa_ms = round((carrier.sent_at - self._received_at) * 1000.0, 1)
        await self._session.send_json(FirstAudio(idx=carrier.idx, ttfa_ms=ttfa_ms).encode())

    async def _heartbeats(self) -> None:
        """A `heartbeat` event whenever nothing was sent for `heartbeat_interval` (a queued preview)."""
        if self._heartbeat_interval <= 0:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            while True:
                idle = self._session.idle_seconds
                if idle < self._heartbeat_interval:
                    await asyncio.sleep(self._heartbeat_interval - idle)
                    continue
                elapsed = round(time.monotonic() - self._received_at, 3)
                await self._session.send_json(Heartbeat(elapsed_sec=elapsed).encode())
