"""`WS /v1/audio/speech/stream`: text arrives in fragments (LLM tokens), speech leaves per sentence.

vLLM-Omni's protocol. Client: `session.config` (the speech request's fields, plus `stream_audio`),
`input.text` fragments, `input.done` (flush the utterance; the socket stays open for the next one),
`session.close`. Server: `audio.start`, binary PCM s16le frames, `audio.done` per sentence, one
`first_audio` per utterance, `session.done` per utterance, `error` (the session goes on).

Each sentence is queued the moment the assembler completes it, so the engine works on sentence 2
while sentence 1 is being sent; a pump per utterance sends them strictly in order. The frames follow
`/ws`'s growing schedule over the whole utterance, the first sentence's leading silence is trimmed,
and `first_audio` reports when the frame carrying the audible onset went out (`utterance.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from aiohttp import WSCloseCode, WSMsgType, web

from ..app_keys import CLOSING_SOCKETS_KEY, LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY, WS_SESSIONS_KEY
from ..errors import SHUTTING_DOWN_REASON, counted
from ..http_compat.metrics import METRICS_KEY
from ..incidents import internal_error
from ..protocol import BadRequest, QueueFull, SynthParams, WorkerError
from ..ws_server.burst import Burst
from ..ws_server.chunking import schedule_sizes
from ..ws_server.masked_frames import MaskedFramesResponse
from ..ws_server.message_deadline import MessageDeadline
from ..ws_server.opening import (
    close_going_away,
    going_away_step,
    let_go,
    open_socket,
    send_grace,
    taken,
    write_burst,
)
from ..ws_server.socket_reading import SocketReading
from ..ws_server.standing import Standing
from .core import engine_info
from .errors import REQUEST_ID_HEADER, openai_error, request_id, with_param
from .formats import FORMATS
from .load_wait import loaded_engine
from .messages import (
    ErrorMessage,
    InputDone,
    InputText,
    SessionConfig,
    SessionConfigured,
    decode_message,
)
from .models_api import check_model
from .request import SpeechOptions, SpeechRequest
from .sentences import AssemblyRules, SentenceAssembler
from .speech import fields_at_fault, pick_format, reference_fields, synth_params, voice_refused
from .utterance import Utterance

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
# A message (configuration, text, `input.done`) that comes while the engine loads waits for it
# (`LOAD_WAIT_SECONDS`): refused with Loading, the first fragments' text was lost and the utterance heard
# from its middle.
# A frame the socket refuses (binary, unmasked, over --max-body-bytes) closes it once the messages read
# before it are handled, or this long after it came (a message may wait for an utterance's place).
ANSWERS_OWED_SECONDS = 5.0


def error_message(error: WorkerError, **where: int) -> bytes:
    detail = openai_error(error)[0]
    return ErrorMessage(detail.message, detail.code or error.name, detail.param, **where).encode()


class SpeechStreamSession:
    """One socket: its configuration, the sentence assembler and the utterance being spoken."""

    def __init__(
        self,
        request: web.Request,
        ws: web.WebSocketResponse,
        standing: Standing,
        abort: Callable[[], object] | None = None,
        deadline: MessageDeadline | None = None,
    ) -> None:
        app = request.app
        self.request, self.ws = request, ws  # (the request's transport and writer: `send_burst`)
        self.deadline = deadline or MessageDeadline(None, 0.0, lambda *why: None)  # the handler's reading
        # A peer that takes nothing of a frame for this long is gone, as on `/ws` (`opening.taken`).
        self._send_grace = send_grace(app[SETTINGS_KEY])
        self._abort = abort or (lambda: None)
        self.app = app
        self.scheduler = app[SCHEDULER_KEY]
        self.limits = app[LIMITS_KEY]
        self.sample_rate = 24000
        self.frame_sizes: tuple[int, ...] = ()
        self.stream_audio = True
        self.audio_format = FORMATS["pcm"]
        self._params: SynthParams | None = None
        self._speech: SpeechRequest | None = None  # the configuration that gave `_params` (None: defaults)
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
        self._posted = self._handled = 0  # messages posted, and handled by `serve` (`answered`)
        self._all_handled = asyncio.Event()
        self._all_handled.set()
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
        await self.send_json(self.counted_error(error, **where))

    def counted_error(self, error: WorkerError, **where: int) -> bytes:
        """An `error` message to send, counted in /metrics now as /ws counts its own (unless it relays a
        section's error event, counted as that event)."""
        if self._metrics is not None and not error.counted:
            self._metrics.count_error(str(error))
        return error_message(error, **where)

    async def send_burst(self, burst: Burst) -> None:
        """An utterance's frames in one write (`opening.write_burst`), as `/ws` sends a preview's."""
        async with self._send_lock:
            await write_burst(self.request, self.ws, burst, self._send_grace, self._abort)

    async def post(self, text: str, received_at: float) -> None:
        """A client message for `serve`, in order; waits while MAX_HELD_CHARS wait to be handled (the
        message deadline paused meanwhile: whole messages wait unread in aiohttp's queue)."""
        self._standing.in_use()
        self._held += len(text)
        self._posted += 1
        self._all_handled.clear()
        self._inbox.put_nowait((text, received_at))
        if self._held > MAX_HELD_CHARS:
            self.deadline.pause()
            while self._held > MAX_HELD_CHARS:
                self._room.clear()
                await self._room.wait()
            self.deadline.resume()

    async def serve(self) -> None:
        """Handle the posted messages one by one, until `session.close` has been served."""
        while True:  # (the message is handed over, not kept here while it is handled: `on_text`)
            going_on = await self.on_text(*self._taken(await self._inbox.get()))
            self._handled += 1
            if self._handled == self._posted:
                self._all_handled.set()
            if not going_on:
                return

    def _taken(self, posted: tuple[str, float]) -> tuple[str, float]:
        """A posted message, taken off the inbox: its characters wait there no more."""
        self._held -= len(posted[0])
        self._room.set()
        return posted

    async def answered(self) -> None:
        """Once each message posted so far has been handled (its answer sent: `session.configured`, an
        `error`; its sentences queued), or ANSWERS_OWED_SECONDS have passed: a frame refused after them
        closes the socket, but only then (the answers were lost to the close before)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(ANSWERS_OWED_SECONDS):
                await self._all_handled.wait()

    async def on_text(self, text: str, received_at: float) -> bool:
        """One client message; False once `session.close` has been served (the socket then closes).
        Neither `text` nor a `session.config`'s message is kept while it is handled: an inline
        `ref_audio` (in base64, up to --max-body-bytes, twice) would wait uncounted for a decode slot
        beside its decoded audio, the one copy the body budget holds while it waits."""
        self._standing.in_use()
        try:
            message = decode_message(text)
            del text
            if isinstance(message, SessionConfig):
                speech, stream_audio = message.request(), message.stream_audio
                del message
                await self._configure(speech, stream_audio)
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
        except ConnectionError:  # the peer is gone, or was dropped for taking nothing: not a bug of ours
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.ws.close()
            return False
        except Exception as exc:  # noqa: BLE001 - a bug: said (its incident id), then 1011 as before
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.send_error(internal_error(log, exc, "on the speech stream socket"))
                await self.ws.close(code=WSCloseCode.INTERNAL_ERROR, message=b"internal error")
            return False
        finally:
            self._update_standing()
        return True

    async def _configure(self, speech: SpeechRequest, stream_audio: bool) -> None:
        """Fields as in POST /v1/audio/speech; they apply to sentences queued after this message."""
        await loaded_engine(self.app)
        check_model(self.scheduler, speech.model)
        fmt = pick_format(speech.response_format or "pcm", engine_info(self.scheduler).sample_rate)
        params = await synth_params(self.app, speech)
        with fields_at_fault(speech, params):  # a language, voice or path every sentence would fail on
            await self.scheduler.check_params(params)
        self._params, self._speech, self.reference_fields = params, speech, reference_fields(speech)
        self.stream_audio = stream_audio
        self.audio_format = fmt
        await self.send_json(SessionConfigured(self._sample_rate(), format=fmt.name).encode())

    def _sample_rate(self) -> int:
        self.sample_rate = engine_info(self.scheduler).sample_rate
        self.frame_sizes = schedule_sizes(self.app[SETTINGS_KEY].chunk_schedule_ms, self.sample_rate)
        return self.sample_rate

    async def _input(self, text: str, received_at: float) -> None:
        if len(text) > self.limits.max_text_chars:
            limit = counted(self.limits.max_text_chars, "character", "characters")
            raise with_param(BadRequest(f"a fragment may have at most {limit}"), "text")
        await loaded_engine(self.app)
        params = await self._current_params()
        utterance = await self._open_utterance(received_at)
        for piece in self._assembler.feed(text):
            await utterance.submit(piece, params, received_at)

    def refused(self, error: WorkerError, params: SynthParams) -> WorkerError:
        """A sentence's refusal in this route's words (`speech.voice_refused`)."""
        return voice_refused(error, self._speech if params is self._params else None, params)

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
        await loaded_engine(self.app)
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
        self._all_handled.set()  # (nothing more is handled)
        if not serving.cancelled() and not self.ws.closed:
            self._closing = asyncio.get_running_loop().create_task(
                self.ws.close(code=WSCloseCode.INTERNAL_ERROR)
            )

    async def going_away(self) -> bool:
        """Shutdown, after the drain: no sentence still waiting will be spoken here before the restart.
        An utterance still being spoken stops with an `error` (QueueFull: shutting down; the sentences
        whose `audio.done` came were sent whole), then the socket closes with 1001, as `/ws` does,
        instead of a silent socket that aiohttp would cut (1006) seconds later. Bounded throughout."""
        speaking = self._held > 0 or any(not utterance.task.done() for utterance in self._live)
        await self.close()
        if speaking:
            await going_away_step(self.send_error(QueueFull(SHUTTING_DOWN_REASON)))
        await close_going_away(self.ws)
        return speaking

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
    ws = await open_socket(request, {REQUEST_ID_HEADER: request_id(request)})  # (its 101 names its id)
    if isinstance(ws, MaskedFramesResponse):  # a refused frame comes to the loop below, the socket open
        ws.refusals_to_the_route()
    reading = SocketReading(request, ws)
    session = SpeechStreamSession(request, ws, Standing(request, ws), reading.abort, reading.deadline)
    sessions = request.app[WS_SESSIONS_KEY]
    sessions.add(session)
    serving = asyncio.get_running_loop().create_task(session.serve(), name="speech-stream-session")
    serving.add_done_callback(session.served)
    try:
        async for message in reading.messages():
            if serving.done():  # session.close served, or the socket broke under a send
                break
            if message.type == WSMsgType.TEXT:
                await session.post(message.data, time.monotonic())
                del message  # (nor kept here while the next is awaited: `on_text`)
            elif message.type == WSMsgType.BINARY:  # the answers to the messages before it go out first
                await session.answered()
                await ws.close(code=WSCloseCode.UNSUPPORTED_DATA, message=b"binary frames are not accepted")
                break
            elif (
                message.type == WSMsgType.ERROR
            ):  # a frame refused (1002 unmasked, 1009 over --max-body-bytes)
                await session.answered()
                code = getattr(message.data, "code", WSCloseCode.PROTOCOL_ERROR)
                await ws.close(code=code)  # (as aiohttp's own close of it: no reason)
                request.app[CLOSING_SOCKETS_KEY].linger_failed(request)
                break
    finally:
        reading.close()
        sessions.discard(session)
        serving.cancel()
        await session.close()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):  # a send to a socket gone
            await serving  # an error of its own is raised here, as the handler's
        let_go(request)
    return ws
