"""`WS /v1/audio/speech/stream`: text arrives in fragments (LLM tokens), speech leaves per sentence.

vLLM-Omni's protocol. Client: `session.config` (the speech request's fields, plus `stream_audio`),
`input.text` fragments, `input.done` (flush the utterance; the socket stays open for the next one),
`session.close`. Server: `audio.start`, binary PCM s16le frames, `audio.done` per sentence, one
`first_audio` per utterance, `session.done` per utterance, `error` (the session goes on).

Each sentence is queued the moment the assembler completes it, so the engine works on sentence 2
while sentence 1 is being sent; a pump per utterance sends them strictly in order. The frames follow
`/ws`'s growing schedule over the whole utterance, the first sentence's leading silence is trimmed,
and `first_audio` reports when the frame carrying the audible onset went out.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from aiohttp import WSCloseCode, WSMsgType, web

from .. import wire
from ..app_keys import LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY, WS_SESSIONS_KEY
from ..audio import OnsetWatch, to_pcm16
from ..http_compat.metrics import METRICS_KEY
from ..protocol import BadRequest, QueueFull, SynthParams, UnknownMessage, WorkerError
from ..ws_server.chunking import GrowingChunker, schedule_sizes
from ..ws_server.message_deadline import MessageDeadline, message_deadline
from ..ws_server.opening import (
    SEND_GRACE_HEARTBEATS,
    abort_connection,
    close_going_away,
    going_away_step,
    let_go,
    open_socket,
    taken,
)
from ..ws_server.standing import Standing
from .core import SpeechRun, engine_info, loaded_engine, queue_has_room, shutting_down, start_speech
from .errors import openai_error, with_param
from .formats import FORMATS, AudioFormat, encode_whole
from .messages import (
    CLIENT_TYPES,
    ClientMessage,
    ErrorMessage,
    InputDone,
    InputText,
    SentenceDone,
    SentenceStart,
    SessionClose,
    SessionConfig,
    SessionConfigured,
    SessionDone,
    StreamFirstAudio,
)
from .request import SpeechOptions
from .sentences import AssemblyRules, SentenceAssembler
from .speech import check_model, fields_at_fault, pick_format, reference_fields, synth_params

if TYPE_CHECKING:  # the job core loads when an app is built, not when it is imported
    pass

log = logging.getLogger(__name__)

# Sentences of one socket queued or being sent at once. Past this, the next sentence waits until one has
# been sent: audio made for a client that does not read, or faster than it reads, stays bounded (each
# sentence's own bound is 30 s), as does its share of the queue.
MAX_SENTENCES_AHEAD = 4
# Utterances of one socket not yet finished (open, or waiting to be played behind an earlier one). Past
# this, the next `input.text`/`input.done` waits, as a sentence waits for its place: each was a task, and
# 20 000 `input.done` (0.4 MB) sent while a sentence played held the event loop for 10 s (a scan of
# them all per message) and kept 20 000 tasks.
MAX_UTTERANCES_AHEAD = 4
# Client messages read but not yet handled (their text waits for a sentence's place) held per socket, in
# characters of their frames. The socket is read on meanwhile, so a close is seen at once; past this
# bound reading pauses until they are handled.
MAX_HELD_CHARS = 64 * 1024
# A sentence refused for a full queue (`--max-queue`) waits this long for room, and the utterance's later
# sentences wait behind it: refused at once, sentences 1-3 of five were lost and 0 and 4 played, a gap the
# listener could not tell. Past the wait the utterance ends with that one error; none of its later
# sentences is spoken (a shutdown's refusal ends it at once). The queue is looked at after
# QUEUE_POLL_SECONDS, then twice as long each time up to QUEUE_POLL_MAX_SECONDS, so sockets waiting for
# long do not wake the loop 20 times a second each just when it is busiest.
QUEUE_WAIT_SECONDS = 30.0
QUEUE_POLL_SECONDS = 0.05
QUEUE_POLL_MAX_SECONDS = 1.0
# A message (configuration, text, `input.done`) that comes while the engine loads waits this long for it:
# refused with Loading, the first fragments' text was lost and the utterance heard from its middle.
LOAD_WAIT_SECONDS = 30.0


def pcm_bytes(samples: np.ndarray) -> bytes:
    return to_pcm16(samples).astype("<i2").tobytes()


async def encode_file(samples: np.ndarray, sample_rate: int, fmt: AudioFormat) -> bytes:
    return await asyncio.to_thread(encode_whole, samples, sample_rate, fmt)


def error_message(error: WorkerError, **where: int) -> bytes:
    detail = openai_error(error)[0]
    return ErrorMessage(detail.message, detail.code or error.name, detail.param, **where).encode()


def decode_message(text: str) -> SessionConfig | InputText | InputDone | SessionClose:
    """A client text frame as its message; a frame that is no object, or of no known `type`, is
    UnknownMessage (a JSON mistake or a bad field of a known one is BadRequest)."""
    try:
        message: SessionConfig | InputText | InputDone | SessionClose = wire.decode(text, ClientMessage)
    except BadRequest:
        found = wire.tag_of(text, "type")
        if found is not None and found[1] not in CLIENT_TYPES:  # JSON, but no object of a known type
            raise UnknownMessage(f"unknown message type {str(found[1])[:40]!r}") from None
        raise
    return message


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
        self.refused = False  # a sentence found no room in the queue: the rest is not spoken
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
            error = exc
        session = self.session
        self._queue.put_nowait(
            Pending(index, text, run, error, ready_at, session.audio_format, session.stream_audio)
        )

    async def _start(self, text: str, params: SynthParams, *, first: bool) -> SpeechRun:
        """The sentence queued, after waiting up to QUEUE_WAIT_SECONDS for room in a full queue."""
        scheduler = self.session.scheduler
        loop = asyncio.get_running_loop()
        deadline = loop.time() + QUEUE_WAIT_SECONDS
        while True:
            try:
                return await start_speech(
                    scheduler, text, params, trim_leading_silence=first, continues=not first
                )
            except QueueFull as full:
                if not await self._room(deadline):
                    if shutting_down(scheduler):
                        raise
                    raise QueueFull(
                        f"{full}, for {QUEUE_WAIT_SECONDS:g} s; the rest of this utterance is not spoken"
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
            while (pending := await self._queue.get()) is not None:
                try:
                    await self._play(pending)
                finally:
                    self.session.ahead.release()
            await self.session.send_json(SessionDone(self.index, self.sentences).encode())
        except (ConnectionError, RuntimeError):
            self.cancel_runs()  # the socket broke under a send: nobody listens any more
        finally:
            while not self._queue.empty():  # never to be played: their places go to whoever waits
                if self._queue.get_nowait() is not None:
                    self.session.ahead.release()

    def cancel_runs(self) -> None:
        for run in self.runs:
            run.cancel()

    async def _play(self, pending: Pending) -> None:
        where = {"utterance_index": self.index, "sentence_index": pending.index}
        if pending.run is None:
            assert pending.error is not None
            await self.session.send_error(pending.error, **where)
            return
        session = self.session
        fmt = pending.fmt
        start = SentenceStart(self.index, pending.index, pending.text, session.sample_rate, format=fmt.name)
        await session.send_json(start.encode())
        sent = {"bytes": 0, "frames": 0}
        streamed = fmt.name == "pcm" and pending.stream_audio
        held: list[np.ndarray] = []
        failed = False
        try:
            async for samples in pending.run.audio():
                if streamed:
                    for frame in self._chunker.feed(samples):
                        await self._send_audio(frame, pcm_bytes(frame), pending.index, sent)
                else:
                    held.append(samples)
        except WorkerError as error:
            failed = True
            await session.send_error(error, **where)
        rest = self._chunker.flush() if streamed else (np.concatenate(held) if held else None)
        if rest is not None and rest.size and not failed:
            payload = (
                pcm_bytes(rest) if fmt.name == "pcm" else await encode_file(rest, session.sample_rate, fmt)
            )
            await self._send_audio(rest, payload, pending.index, sent)
        if pending.run in self.runs:  # finished: nothing left to cancel (a long utterance holds no history)
            self.runs.remove(pending.run)
        done = SentenceDone(
            self.index, pending.index, sent["bytes"], sent["frames"], session.sample_rate, error=failed
        )
        await session.send_json(done.encode())

    async def _send_audio(
        self, frame: np.ndarray, payload: bytes, sentence: int, sent: dict[str, int]
    ) -> None:
        """One binary frame (`payload` encodes `frame`); the onset watch follows the samples."""
        await self.session.send_bytes(payload)
        sent_at = time.monotonic()
        sent["bytes"] += len(payload)
        sent["frames"] += 1
        start, self._stream_samples = self._stream_samples, self._stream_samples + int(frame.size)
        if self._onset.onset is None:
            self._unheard.append((start, self._stream_samples, sent_at, sentence))
            onset = self._onset.feed(frame)
            if onset is not None:
                await self._first_audio(onset)
            else:
                self._unheard = [f for f in self._unheard if f[1] > self._onset.dropped]

    async def _first_audio(self, onset: int) -> None:
        """When the frame holding the audible onset went out, from the fragment that completed the
        first sentence (`ttfa_ms`) and from the utterance's first fragment (`since_first_text_ms`)."""
        carrier = next((f for f in self._unheard if f[0] <= onset < f[1]), self._unheard[-1])
        self._unheard = []
        ready_at = self._first_ready_at if self._first_ready_at is not None else self.first_text_at
        first = StreamFirstAudio(
            utterance_index=self.index,
            sentence_index=carrier[3],
            ttfa_ms=round((carrier[2] - ready_at) * 1000.0, 1),
            since_first_text_ms=round((carrier[2] - self.first_text_at) * 1000.0, 1),
        )
        await self.session.send_json(first.encode())


class SpeechStreamSession:
    """One socket: its configuration, the sentence assembler and the utterance being spoken."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        app: web.Application,
        standing: Standing,
        abort: Callable[[], object] | None = None,
        deadline: MessageDeadline | None = None,
    ) -> None:
        self.ws = ws
        self.deadline = deadline or MessageDeadline(None, 0.0, lambda: None)  # the handler's reading
        # A peer that takes nothing of a frame for this long is gone, as on `/ws` (`opening.taken`).
        self._send_grace = SEND_GRACE_HEARTBEATS * app[SETTINGS_KEY].heartbeat_interval
        self._abort = abort or (lambda: None)
        self.app = app
        self.scheduler = app[SCHEDULER_KEY]
        self.limits = app[LIMITS_KEY]
        self.sample_rate = 24000
        self.frame_sizes: tuple[int, ...] = ()
        self.stream_audio = True
        self.audio_format = FORMATS["pcm"]
        self._params: SynthParams | None = None
        self.reference_fields = ("voice", "voice")  # `SpeechRun.reference_fields` of its sentences
        self._assembler = SentenceAssembler(self._rules())
        self._utterance: Utterance | None = None
        self._last_task: asyncio.Task | None = None
        self._live: list[Utterance] = []
        self._utterances = 0
        self._send_lock = asyncio.Lock()
        self.ahead = asyncio.Semaphore(MAX_SENTENCES_AHEAD)
        self._utterance_places = asyncio.Semaphore(MAX_UTTERANCES_AHEAD)
        self._standing = standing
        self._watched: asyncio.Task | None = None
        self._inbox: asyncio.Queue[tuple[str, float]] = asyncio.Queue()
        self._held = 0  # characters of the messages in the inbox
        self._room = asyncio.Event()
        self._closing: asyncio.Task | None = None
        self._metrics = app.get(METRICS_KEY)
        self._update_standing()

    def _update_standing(self, _: object = None) -> None:
        """Idle for the connection guard while no utterance is open (no fragment waits for the rest of
        its sentence) and every sentence has been sent; a pause inside an utterance keeps it in use."""
        if self._utterance is not None or self._held or self.ws.closed:
            return
        pump = self._last_task
        if pump is None or pump.done():
            self._standing.idle()
        elif pump is not self._watched:  # one callback per pump, however many messages arrive meanwhile
            self._watched = pump
            pump.add_done_callback(self._update_standing)

    def _rules(self) -> AssemblyRules:
        return AssemblyRules(max_chars=min(AssemblyRules.max_chars, self.limits.max_text_chars))

    async def send_json(self, body: bytes) -> None:
        """One text frame: an encoded message."""
        async with self._send_lock:
            await taken(self.ws.send_frame(body, WSMsgType.TEXT), self._send_grace, self._abort)

    async def send_error(self, error: WorkerError, **where: int) -> None:
        """An `error` message, counted in /metrics as /ws counts its own (unless it relays a section's
        error event, counted as that event)."""
        if self._metrics is not None and not error.counted:
            self._metrics.count_error(str(error))
        await self.send_json(error_message(error, **where))

    async def send_bytes(self, data: bytes) -> None:
        async with self._send_lock:
            await taken(self.ws.send_bytes(data), self._send_grace, self._abort)

    async def post(self, text: str, received_at: float) -> None:
        """A client message for `serve`, in order; waits while MAX_HELD_CHARS wait to be handled (the
        message deadline paused meanwhile: whole messages wait unread in aiohttp's queue)."""
        self._standing.in_use()
        self._held += len(text)
        self._inbox.put_nowait((text, received_at))
        if self._held > MAX_HELD_CHARS:
            self.deadline.pause()
            while self._held > MAX_HELD_CHARS:
                self._room.clear()
                await self._room.wait()
            self.deadline.resume()

    async def serve(self) -> None:
        """Handle the posted messages one by one, until `session.close` has been served."""
        while True:
            text, received_at = await self._inbox.get()
            self._held -= len(text)
            self._room.set()
            if not await self.on_text(text, received_at):
                return

    async def on_text(self, text: str, received_at: float) -> bool:
        """One client message; False once `session.close` has been served (the socket then closes)."""
        self._standing.in_use()
        try:
            message = decode_message(text)
            if isinstance(message, SessionConfig):
                await self._configure(message)
            elif isinstance(message, InputText):
                await self._input(message.text, received_at)
            elif isinstance(message, InputDone):
                await self._end_utterance(received_at)
            else:
                await self._end_utterance(received_at, even_empty=False)
                if self._last_task is not None:
                    await asyncio.wait([self._last_task])
                await self.ws.close()
                return False
        except WorkerError as error:
            await self.send_error(error)
        finally:
            self._update_standing()
        return True

    async def _configure(self, config: SessionConfig) -> None:
        """Fields as in POST /v1/audio/speech; they apply to sentences queued after this message."""
        speech = config.request()
        await loaded_engine(self.scheduler, LOAD_WAIT_SECONDS)
        check_model(self.scheduler, speech.model)
        fmt = pick_format(speech.response_format or "pcm")
        params = await synth_params(self.app, speech)
        with fields_at_fault(speech):  # a language or path every sentence would fail on
            await self.scheduler.check_params(params)
        self._params, self.reference_fields = params, reference_fields(speech)
        self.stream_audio = config.stream_audio
        self.audio_format = fmt
        await self.send_json(SessionConfigured(self._sample_rate(), format=fmt.name).encode())

    def _sample_rate(self) -> int:
        self.sample_rate = engine_info(self.scheduler).sample_rate
        self.frame_sizes = schedule_sizes(self.app[SETTINGS_KEY].chunk_schedule_ms, self.sample_rate)
        return self.sample_rate

    async def _input(self, text: str, received_at: float) -> None:
        if len(text) > self.limits.max_text_chars:
            raise with_param(
                BadRequest(f"a fragment may have at most {self.limits.max_text_chars} characters"), "text"
            )
        await loaded_engine(self.scheduler, LOAD_WAIT_SECONDS)
        params = await self._current_params()
        utterance = await self._open_utterance(received_at)
        for piece in self._assembler.feed(text):
            await utterance.submit(piece, params, received_at)

    async def _current_params(self) -> SynthParams:
        if self._params is None:  # no session.config: the defaults of POST /v1/audio/speech
            self._params = await synth_params(self.app, SpeechOptions().request())
        return self._params

    async def _open_utterance(self, received_at: float) -> Utterance:
        if self._utterance is None:
            self._sample_rate()
            await self._utterance_places.acquire()  # given back when its pump ends, however it ends
            self._utterance = Utterance(self, self._utterances, received_at, self._last_task)
            self._utterance.task.add_done_callback(lambda _: self._utterance_places.release())
            self._last_task = self._utterance.task
            self._live = [u for u in self._live if not u.task.done()] + [self._utterance]
            self._utterances += 1
        return self._utterance

    async def _end_utterance(self, received_at: float, *, even_empty: bool = True) -> None:
        """Speak what is left and send `session.done` (an `input.done` with no text gets one too,
        with `total_sentences: 0`, so a client waiting for it never hangs). `received_at`: when the
        message arrived, which completed the last sentence (it may have waited for its turn since)."""
        if self._utterance is None and not even_empty:
            return
        await loaded_engine(self.scheduler, LOAD_WAIT_SECONDS)
        params = await self._current_params()
        utterance = await self._open_utterance(received_at)
        for piece in self._assembler.flush():
            await utterance.submit(piece, params, received_at)
        utterance.end()
        self._utterance = None
        self._assembler = SentenceAssembler(self._rules())

    def served(self, serving: asyncio.Task) -> None:
        """`serve` has ended: a `post` waiting for room waits no more, and a socket it left open (it
        failed) is closed, so the reading ends too."""
        self._held = 0
        self._room.set()
        if not serving.cancelled() and not self.ws.closed:
            self._closing = asyncio.get_running_loop().create_task(
                self.ws.close(code=WSCloseCode.INTERNAL_ERROR)
            )

    async def going_away(self) -> None:
        """Shutdown, after the drain: no sentence still waiting will be spoken here before the restart.
        An utterance still being spoken stops with an `error` (QueueFull: shutting down; the sentences
        whose `audio.done` came were sent whole), then the socket closes with 1001, as `/ws` does,
        instead of a silent socket that aiohttp would cut (1006) seconds later. Bounded throughout."""
        speaking = self._held > 0 or any(not utterance.task.done() for utterance in self._live)
        await self.close()
        if speaking:
            await going_away_step(
                self.send_error(QueueFull("the worker is shutting down; send the text again once it is back"))
            )
        await close_going_away(self.ws)

    async def close(self) -> None:
        """The socket is gone: stop every queued sentence and the pumps."""
        for utterance in self._live:
            utterance.cancel()
        for utterance in self._live:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await utterance.task


async def handle_speech_stream(request: web.Request) -> web.StreamResponse:
    """Reads the socket while `serve` handles the messages, so a close is seen even while sentences
    wait for their place (then the queued ones stop at once)."""
    ws = await open_socket(request)
    deadline = message_deadline(request)
    session = SpeechStreamSession(
        ws, request.app, Standing(request, ws), functools.partial(abort_connection, request), deadline
    )
    sessions = request.app[WS_SESSIONS_KEY]
    sessions.add(session)
    serving = asyncio.get_running_loop().create_task(session.serve(), name="speech-stream-session")
    serving.add_done_callback(session.served)
    try:
        async for message in ws:
            deadline.took_message()
            if serving.done():  # session.close served, or the socket broke under a send
                break
            if message.type == WSMsgType.TEXT:
                await session.post(message.data, time.monotonic())
            elif message.type == WSMsgType.BINARY:
                await ws.close(code=WSCloseCode.UNSUPPORTED_DATA, message=b"binary frames are not accepted")
                break
            elif message.type == WSMsgType.ERROR:
                break
    finally:
        deadline.close()
        sessions.discard(session)
        serving.cancel()
        await session.close()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):  # a send to a socket gone
            await serving  # an error of its own is raised here, as the handler's
        let_go(request)
    return ws
