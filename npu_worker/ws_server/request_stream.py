"""The pump of one `/ws` request: its subscription's log entries and audio chunks become text frames
and binary PCM frames cut to the growing schedule, in log order, with `first_audio` once the frame
holding the audible onset has gone out and a `heartbeat` whenever nothing was sent for a while (the
session's timer finds it due).

Whatever the subscription holds when the pump wakes goes out as one burst (`burst.py`): the same frames
in the same order, in one write instead of one per frame (about 23 a preview)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from ..audio import to_pcm16
from ..errors import SHUTTING_DOWN_REASON
from ..incidents import internal_error
from ..jobs.model import AudioChunk, Job, LogEntry
from ..jobs.subscription import Subscription
from ..protocol import (
    AudioEnd,
    AudioStart,
    Done,
    FirstAudio,
    Heartbeat,
    Progress,
    QueueFull,
    SectionError,
    WorkerError,
)
from .burst import BURST_BYTES, Burst
from .chunking import GrowingChunker
from .opening import going_away_step

if TYPE_CHECKING:
    from ..jobs.scheduler import Scheduler
    from .session import WsSession

log = logging.getLogger(__name__)

UNHEARD_KEEP_SECONDS = 1.0  # sent frames remembered while the onset is unknown (it is found within ~70 ms)


@dataclass(frozen=True)
class SentFrame:
    """Where a frame sits in the request's stream (samples) and when it went out."""

    start: int
    end: int
    sent_at: float
    idx: int


def cancelled_done(entry: LogEntry) -> LogEntry:
    """The job's `done` as a caller whose `cancel` was taken is told it: `cancelled: true` (PROTOCOL §6),
    since the audio not sent by then was dropped for it, though the job ended ok (the cancel came as its
    last section ended: `jobs/ending.end_job`), where that caller was told `cancelled: false`."""
    assert isinstance(entry.event, Done)
    return LogEntry(entry.seq, msgspec.structs.replace(entry.event, cancelled=True))


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
    ) -> None:
        self._session = session
        self._scheduler = scheduler
        self.job = job
        self._sample_rate = sample_rate
        self._received_at = received_at
        self._chunker = GrowingChunker(frame_sizes, dtype="<i2")  # PCM: converted once per chunk
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
        self._cancel_taken = False  # the caller's `cancel` stopped a live job: its `done` says cancelled
        self._shutdown_error: WorkerError | None = None  # sent before `done` when the shutdown ended the job
        self._task: asyncio.Task[None] | None = None
        self._heartbeat_send: asyncio.Task[None] | None = None  # one being sent
        self._burst = Burst()
        self._ended = False  # its `done` was taken
        self._finished = False  # the pump has ended

    def start(self) -> None:
        """The pump begins in the handler's step: what the subscription holds (the `start`, published at
        once by the journal) written now if it goes out at once, then it waits parked, with no task,
        its direct write taking each drain's items (`_write_direct`). A task is made only when that
        cannot go on (`_unpark`): a task's first step and its step at `done` were a turn of the loop
        each a preview (SERVER_OVERHEAD.md, stop 56)."""
        self._session.watch_heartbeat()
        subscription = self._subscription
        subscription.direct = self._write_direct
        try:
            parked = self._write_direct()
        except Exception as exc:  # noqa: BLE001 - raised in the task, which reports it as it would its own
            self._unpark(exc)
            return
        if parked:
            subscription.park(self._unpark)
        else:
            self._unpark(None)

    def _unpark(self, failure: Exception | None) -> None:
        """The direct write cannot go on: a `done` written whole ends the pump here; else its task reads
        on (a full peer, a send in flight, the end, a `failure` of the direct write raised in it)."""
        if failure is None and self._ended and not self._burst.size:
            self._finish()
        else:
            self._read_on_in_task(failure)

    def _read_on_in_task(self, failure: Exception | None = None) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(failure), name=f"ws-job-{self.job.id}")

    def cancel(self) -> bool:
        """Ask the scheduler to stop (once); audio not yet sent is dropped. False if the pump has ended."""
        if self._finished:
            return False
        if not self._cancelled:
            self._cancelled = True
            self._cancel_taken = self._scheduler.cancel(self.job.id)
        return True

    def _stop_job(self) -> None:
        self._cancelled = True
        self._scheduler.cancel(self.job.id)

    async def stop(self) -> None:
        self.cancel()
        if self._task is None:  # parked (or ended): no task to end
            self._subscription.unpark()
            if not self._finished:
                self._finish()
            return
        self._subscription.close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if not self._finished:  # (a task cancelled before its first step never ran its `finally`)
            self._finish()

    async def end_for_shutdown(self, wait: float) -> bool:
        """The worker shuts down: the job is cancelled (its queued sections will not run here), and
        what was made still goes out, then the `error` saying why and the `done`; a pump that has not
        ended within `wait` seconds is stopped. Whether the job was still running (and so was ended)."""
        cancelled = self._scheduler.cancel(self.job.id)
        if cancelled:  # else its `done` is on its way: it ended whole
            self._shutdown_error = QueueFull(SHUTTING_DOWN_REASON)
        if self._task is None and not self._finished:  # parked: it reads on in a task, waited on here
            self._subscription.unpark()
            self._read_on_in_task()
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=wait)
        await self.stop()
        if self._shutdown_error is not None:  # no `done` came in time (a Redis queue's cancel is slower)
            await going_away_step(self._session.send_error(self._shutdown_error), wait)
        return cancelled

    async def _run(self, failure: Exception | None) -> None:
        try:
            if failure is not None:  # (the direct write's, while parked)
                raise failure
            async for first in self._subscription:
                self._take(first)
                if self._burst.size:  # (empty: no frame; not `Burst.__bool__`'s call, stop 63)
                    await self._session.send_burst(self._burst)
            if (
                not self._ended
            ):  # let go without a `done`: the shared queue lost the job, or its engines failed
                log.warning("the job %s of a WebSocket request ended without its done", self.job.id)
                self._stop_job()
                await self._session.fail(self._scheduler.stream_lost(self.job))
        except (ConnectionError, RuntimeError):
            # The socket broke under a send: nobody listens any more, so the work stops.
            self._stop_job()
        except Exception as exc:  # noqa: BLE001 - a started stream reports an error event, then closes
            error = internal_error(log, exc, "in the WebSocket stream of job %s", self.job.id)
            self._stop_job()
            if self._burst.size:  # the frames made before the failure still go out, then the error
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await self._session.send_burst(self._burst)
            await self._session.fail(error)
        finally:
            self._finish()

    def _finish(self) -> None:
        self._finished = True
        self._subscription.direct = None
        self._stop_heartbeat()
        self._subscription.close()
        self._session.stream_ended(self)

    def _take(self, first: LogEntry | AudioChunk | None) -> None:
        """What the wake-up brought into the burst, up to a burst's worth."""
        item = first
        while item is not None:
            if isinstance(item, AudioChunk):
                self._on_audio(item)
            elif isinstance(item, LogEntry) and self._on_entry(item):
                self._ended = True
            item = None if self._burst.size >= BURST_BYTES else self._subscription.ready()  # (`full`)

    def _write_direct(self) -> bool:
        """The subscription's items, taken and written at the end of the hand-off's drain that brought
        them while the pump waits, in that turn of the loop (the pump's task woken took one more turn
        a hand-over; SERVER_OVERHEAD.md, stop 52): burst after burst (each closed once it holds
        `BURST_BYTES`, as the pump's own: one chunk's frames may take it past) while the write goes
        out at once: no earlier send in flight, the peer's buffers not full (a burst past the first
        had woken the pump for one more turn; stop 53). False: the pump
        is woken to go on (a full peer, the `done`, the end: a parked pump's `_unpark`); a write that fills the peer's buffers is
        waited on under the send deadline by a task that holds the send lock (`WsSession.write_now`),
        the request's last burst too."""
        writable = self._session.writable_now()
        while writable:
            self._take(self._subscription.ready())
            if not self._burst.size:  # (nothing more, or the end: the pump ends it)
                break
            writable = self._session.write_now(self._burst)  # (and the next goes out at once too)
            if self._ended or not self._subscription.holds():
                break
        return not (self._ended or self._subscription.holds())

    def _on_entry(self, entry: LogEntry) -> bool:
        """The entry's line into the burst (an open section ended first); whether it was the `done`.
        Whether it is the `done` is asked once an entry, not at each step (SERVER_OVERHEAD.md, stop 55)."""
        event = entry.event
        done = isinstance(event, Done)
        if self._open_idx is not None and (
            done
            or (isinstance(event, Progress) and event.status != "synth")
            or isinstance(event, SectionError)
        ):
            self._end_section()
        if done:
            if self._shutdown_error is not None:
                error, self._shutdown_error = self._shutdown_error, None
                if isinstance(event, Done) and event.cancelled:  # (else it ended whole: nothing was cut)
                    self._burst.text(self._session.counted_error(error))
            # Free the connection before `done` goes out: a client may send its next request the
            # moment it reads `done`, and must not get Busy for it.
            self._session.stream_ended(self)
            if self._cancel_taken and isinstance(event, Done) and not event.cancelled:
                entry = cancelled_done(entry)
        self._burst.text(entry.line)
        return done

    def _on_audio(self, chunk: AudioChunk) -> None:
        if self._cancelled:
            return
        if self._open_idx != chunk.idx:
            if self._open_idx is not None:
                self._end_section()
            self._open_idx, self._section_samples, self._section_frames = chunk.idx, 0, 0
            self._burst.text(AudioStart(idx=chunk.idx, sample_rate=self._sample_rate).encode())
        if chunk.onset is not None and self._onset_at is None:
            self._onset_at = self._fed_samples + chunk.onset
        self._fed_samples += int(chunk.samples.size)
        pcm = chunk.pcm16 if chunk.pcm16 is not None else to_pcm16(chunk.samples)
        frames = self._chunker.feed(pcm)
        if frames:  # (a chunk short of the next frame's size makes none: no call for it)
            self._send_frames(frames)
        if not self._first_audio_sent:  # the onset may lie in a frame that went out earlier
            self._maybe_first_audio()

    def _end_section(self) -> None:
        """Flush the section's last (short) frame unless cancelled, then `audio_end` with what was sent."""
        rest = self._chunker.flush()
        if rest is not None and not self._cancelled:
            self._send_frames((rest,))
        assert self._open_idx is not None
        end = AudioEnd(idx=self._open_idx, samples=self._section_samples, chunks=self._section_frames)
        self._open_idx = None
        self._burst.text(end.encode())

    def _send_frames(self, frames: Sequence[np.ndarray]) -> None:
        """Frames of little-endian PCM into the burst (written with it, before the pump next waits); one
        call a chunk, not a frame (≈ 7 Python calls a preview on the loop; SERVER_OVERHEAD.md, stop 54),
        and once `first_audio` is out, one call into the burst for them all (stop 55)."""
        burst, idx = self._burst, self._open_idx
        assert idx is not None
        if self._first_audio_sent:  # (no frame's place to keep: the burst takes them all in one call)
            samples = burst.binaries(frames)
            self._stream_samples += samples
            self._section_samples += samples
            self._section_frames += len(frames)
            return
        for frame in frames:
            burst.binary(frame.data)
            size = int(frame.size)
            start, self._stream_samples = self._stream_samples, self._stream_samples + size
            self._section_samples += size
            self._section_frames += 1
            if not self._first_audio_sent:  # (the time is read only while `ttfa_ms` may still need it)
                self._unheard.append(SentFrame(start, self._stream_samples, time.monotonic(), idx))
                self._maybe_first_audio()

    def _maybe_first_audio(self) -> None:
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
        self._burst.text(FirstAudio(idx=carrier.idx, ttfa_ms=ttfa_ms).encode())

    # -- heartbeats: the session's timer finds one due (`WsSession.watch_heartbeat`), a task sends it

    def send_heartbeat(self) -> None:
        """A `heartbeat` event now (nothing was sent for the interval: a queued preview)."""
        self._heartbeat_send = asyncio.get_running_loop().create_task(self._send_heartbeat())

    async def _send_heartbeat(self) -> None:
        elapsed = round(time.monotonic() - self._received_at, 3)
        with contextlib.suppress(ConnectionError, RuntimeError):  # the pump finds a broken socket itself
            await self._session.send_json(Heartbeat(elapsed_sec=elapsed).encode())
            self._session.watch_heartbeat(again=True)

    def _stop_heartbeat(self) -> None:
        if self._heartbeat_send is not None:
            self._heartbeat_send.cancel()
