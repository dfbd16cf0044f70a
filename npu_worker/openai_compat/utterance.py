"""One utterance of the speech-stream socket (`stream_ws.py`): its sentences queued as the assembler
completes them, then played strictly in order by one pump task, on `/ws`'s growing frame schedule over the
whole utterance, with `first_audio` timed at the frame that carries the audible onset. As `/ws`'s pump
does, it writes what it has made as one burst of frames (`ws_server/burst.py`) just before it waits
(for audio, for the next sentence), instead of one write per message.

Apart from the socket's session because it is the part that talks to the scheduler and the audio path;
the session only opens, feeds and ends utterances.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..app_keys import SETTINGS_KEY
from ..audio import OnsetWatch, to_pcm16
from ..errors import SHUTTING_DOWN_REASON
from ..protocol import QueueFull, SynthParams, WorkerError
from ..ws_server.burst import Burst
from ..ws_server.chunking import GrowingChunker
from .core import SpeechRun, queue_has_room, shutting_down, start_speech
from .formats import AudioFormat, encode_whole
from .messages import SentenceDone, SentenceStart, SessionDone, StreamFirstAudio

if TYPE_CHECKING:
    from .stream_ws import SpeechStreamSession

# A sentence refused for a full queue (`--max-queue`) waits this long for room, and the utterance's later
# sentences wait behind it: refused at once, sentences 1-3 of five were lost and 0 and 4 played, a gap the
# listener could not tell. Past the wait the utterance ends with that one error; none of its later
# sentences is spoken (a shutdown's refusal ends it at once). The queue is looked at after
# QUEUE_POLL_SECONDS, then twice as long each time up to QUEUE_POLL_MAX_SECONDS, so sockets waiting for
# long do not wake the loop 20 times a second each just when it is busiest.
QUEUE_WAIT_SECONDS = 30.0
QUEUE_POLL_SECONDS = 0.05
QUEUE_POLL_MAX_SECONDS = 1.0


def pcm_bytes(samples: np.ndarray) -> bytes:
    return to_pcm16(samples).astype("<i2").tobytes()


async def encode_file(samples: np.ndarray, sample_rate: int, fmt: AudioFormat) -> bytes:
    return await asyncio.to_thread(encode_whole, samples, sample_rate, fmt)


@dataclass(frozen=True)
class Pending:
    """A sentence queued for its turn: its run, or the error that kept it from starting."""

    index: int
    text: str
    run: SpeechRun | None
    error: WorkerError | None
    ready_at: float
    fmt: AudioFormat  # pcm: frames on the growing schedule (if streamed); others: one whole file
    stream_audio: bool


class Utterance:
    """The sentences between the first fragment and `input.done`, played in order by one pump task."""

    def __init__(
        self, session: SpeechStreamSession, index: int, first_text_at: float, after: asyncio.Task | None
    ):
        self.session = session
        self.index = index
        self.first_text_at = first_text_at
        self.sentences = 0
        self.runs: list[SpeechRun] = []
        self._queue: asyncio.Queue[Pending | None] = asyncio.Queue()
        self._chunker = GrowingChunker(session.frame_sizes)
        self._onset = OnsetWatch(session.sample_rate)
        self._unheard: list[
            tuple[int, int, float, int]
        ] = []  # (start, end, sent_at, sentence) before the onset
        self._stream_samples = 0
        self._first_ready_at: float | None = None
        self._burst = Burst()  # frames made since the pump last waited: written before it waits again
        self.refused = False  # a sentence found no room in the queue: the rest is not spoken
        self._after = after  # the socket's earlier utterance, played first
        self.task = asyncio.get_running_loop().create_task(self._pump(after), name=f"speech-stream-{index}")

    async def submit(self, text: str, params: SynthParams, ready_at: float) -> None:
        ahead = self.session.ahead
        await ahead.acquire()  # given back once this sentence has been played (or its pump has ended)
        if self.task.done() or self.refused:  # the pump is gone (the socket broke under a send), or an
            ahead.release()  # earlier sentence was refused: nothing would play it in its place
            return
        index, self.sentences = self.sentences, self.sentences + 1
        if self._first_ready_at is None:
            self._first_ready_at = ready_at
        run, error = None, None
        try:
            run = await self._start(text, params, first=index == 0)
            run.reference_fields, run.text_field = self.session.reference_fields, "text"
            self.runs.append(run)
        except QueueFull as exc:
            error, self.refused = exc, True
        except WorkerError as exc:
            error = self.session.refused(exc, params)
        session = self.session
        self._queue.put_nowait(
            Pending(index, text, run, error, ready_at, session.audio_format, session.stream_audio)
        )

    async def _start(self, text: str, params: SynthParams, *, first: bool) -> SpeechRun:
        """The sentence queued, after waiting up to QUEUE_WAIT_SECONDS for room in a full queue. A first
        sentence queued while the socket's earlier utterance still plays `continues` it (`Job.continues`):
        its audio waits behind that one's, which it paused (`jobs/lending.py`): a gap for nothing."""
        scheduler = self.session.scheduler
        continues = not first or (self._after is not None and not self._after.done())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + QUEUE_WAIT_SECONDS
        while True:
            try:
                return await start_speech(
                    scheduler, text, params, trim_leading_silence=first, continues=continues
                )
            except QueueFull as full:
                if not await self._room(deadline):
                    if shutting_down(scheduler):  # the drain's words, as the queued sentences it ends
                        raise QueueFull(SHUTTING_DOWN_REASON) from None
                    raise QueueFull(
                        f"{full.message}, for {QUEUE_WAIT_SECONDS:g} s; the rest of this utterance is not spoken"
                    ) from None

    async def _room(self, deadline: float) -> bool:
        """True once the queue says it has room; False at the deadline, at shutdown, or once the pump has
        ended (the socket broke: nothing would play the sentence)."""
        scheduler, loop = self.session.scheduler, asyncio.get_running_loop()
        max_queue = self.session.app[SETTINGS_KEY].max_queue
        pause = QUEUE_POLL_SECONDS
        while not shutting_down(scheduler) and not self.task.done() and loop.time() < deadline:
            await asyncio.sleep(min(pause, deadline - loop.time()))
            if queue_has_room(scheduler, max_queue):
                return True
            pause = min(2 * pause, QUEUE_POLL_MAX_SECONDS)
        return False

    def end(self) -> None:
        self._queue.put_nowait(None)

    def cancel(self) -> None:
        self.cancel_runs()
        self.task.cancel()

    async def _pump(self, after: asyncio.Task | None) -> None:
        try:
            if after is not None:  # the previous utterance's audio goes first; its failure is its own
                await asyncio.wait([after])
            while True:
                if self._queue.empty() or self._burst.full:  # what was made goes out before the pump
                    await self._flush()  # waits for more, or once it holds 64 KiB (a whole-sentence frame)
                pending = await self._queue.get()
                if pending is None:
                    break
                try:
                    await self._play(pending)
                finally:
                    self.session.ahead.release()
            self._burst.text(SessionDone(self.index, self.sentences).encode())
            await self._flush()
        except (ConnectionError, RuntimeError):
            self.cancel_runs()  # the socket broke under a send: nobody listens any more
        finally:
            while not self._queue.empty():  # never to be played: their places go to whoever waits
                if self._queue.get_nowait() is not None:
                    self.session.ahead.release()

    async def _flush(self) -> None:
        """Write the burst, if it holds anything. The pump calls this before anything it awaits can
        wait (the next sentence, the next audio, an encoding), so it never sleeps on unsent frames."""
        if self._burst:
            await self.session.send_burst(self._burst)

    def cancel_runs(self) -> None:
        for run in self.runs:
            run.cancel()

    async def _play(self, pending: Pending) -> None:
        where = {"utterance_index": self.index, "sentence_index": pending.index}
        session, burst = self.session, self._burst
        if pending.run is None:
            assert pending.error is not None
            burst.text(session.counted_error(pending.error, **where))
            return
        fmt = pending.fmt
        start = SentenceStart(self.index, pending.index, pending.text, session.sample_rate, format=fmt.name)
        burst.text(start.encode())
        sent = {"bytes": 0, "frames": 0}
        streamed = fmt.name == "pcm" and pending.stream_audio
        held: list[np.ndarray] = []
        failed = False
        try:
            async for samples in pending.run.audio(before_waiting=self._flush):
                if streamed:
                    for frame in self._chunker.feed(samples):
                        self._add_audio(frame, pcm_bytes(frame), pending.index, sent)
                    if burst.full:
                        await self._flush()
                else:
                    held.append(samples)
        except WorkerError as error:
            failed = True
            burst.text(session.counted_error(error, **where))
        rest = self._chunker.flush() if streamed else (np.concatenate(held) if held else None)
        if rest is not None and rest.size and not failed:
            if fmt.name == "pcm":
                payload = pcm_bytes(rest)
            else:
                await self._flush()  # (encoded on a thread: the pump waits)
                payload = await encode_file(rest, session.sample_rate, fmt)
            self._add_audio(rest, payload, pending.index, sent)
        if pending.run in self.runs:  # finished: nothing left to cancel (a long utterance holds no history)
            self.runs.remove(pending.run)
        done = SentenceDone(
            self.index, pending.index, sent["bytes"], sent["frames"], session.sample_rate, error=failed
        )
        burst.text(done.encode())

    def _add_audio(self, frame: np.ndarray, payload: bytes, sentence: int, sent: dict[str, int]) -> None:
        """One binary frame into the burst (`payload` encodes `frame`); the onset watch follows the
        samples."""
        self._burst.binary(memoryview(payload))
        sent_at = time.monotonic()
        sent["bytes"] += len(payload)
        sent["frames"] += 1
        start, self._stream_samples = self._stream_samples, self._stream_samples + int(frame.size)
        if self._onset.onset is None:
            self._unheard.append((start, self._stream_samples, sent_at, sentence))
            onset = self._onset.feed(frame)
            if onset is not None:
                self._first_audio(onset)
            else:
                self._unheard = [f for f in self._unheard if f[1] > self._onset.dropped]

    def _first_audio(self, onset: int) -> None:
        """When the frame holding the audible onset went out (was put in the burst written at once), from
        the fragment that completed the first sentence (`ttfa_ms`) and from the utterance's first
        fragment (`since_first_text_ms`)."""
        carrier = next((f for f in self._unheard if f[0] <= onset < f[1]), self._unheard[-1])
        self._unheard = []
        ready_at = self._first_ready_at if self._first_ready_at is not None else self.first_text_at
        first = StreamFirstAudio(
            utterance_index=self.index,
            sentence_index=carrier[3],
            ttfa_ms=round((carrier[2] - ready_at) * 1000.0, 1),
            since_first_text_ms=round((carrier[2] - self.first_text_at) * 1000.0, 1),
        )
        self._burst.text(first.encode())
