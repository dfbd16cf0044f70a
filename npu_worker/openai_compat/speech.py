"""POST /v1/audio/speech: the audio as it is made (bytes, or SSE events), every mistake a 4xx first.

Its batch form is `speech_batch.py`, the models `models_api.py`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from aiohttp import web

from ..app_keys import DECODE_SLOTS_KEY, LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY
from ..http_compat.hang_up import (
    caller_gone,
    end_within,
    send_within,
    stop_if_closed,
    until_caller_gone,
    until_closed,
)
from ..http_compat.request_body import read_body
from ..protocol import (
    BadRequest,
    InvalidAudio,
    RefWavNotAllowed,
    SynthParams,
    UnknownLanguage,
    UnknownVoice,
    WorkerError,
)
from ..voice_names import DEFAULT_VOICE
from ..voice_upload import UploadLimits
from ..ws_server.burst import BURST_BYTES
from .core import (
    SpeechRun,
    engine_info,
    engine_voice,
    speaks_languages_as_voices,
    start_speech,
    voice_library,
)
from .errors import REQUEST_ID_HEADER, name_request, openai_error, openai_errors, request_id, with_param
from .formats import (
    DEFAULT_FORMAT_FALLBACK,
    PROBE_RATE,
    AudioFormat,
    StreamEncoder,
    available_formats,
    require_format,
)
from .load_wait import wait_for_load
from .messages import SpeechAudioDelta, SpeechAudioDone, SpeechError
from .models_api import check_model
from .request import (
    DEFAULT_FORMAT,
    DecodedAudio,
    InlineAudio,
    SpeechRequest,
    parse_speech_request,
)

if TYPE_CHECKING:  # the job core loads when an app is built, not when it is imported
    from ..jobs.scheduler import Scheduler

log = logging.getLogger(__name__)

# Audio a download may have waiting unread: more than one whole text's worth (espeak speaks Korean at
# ~0.15 s per character), at least 10 min (float32: 58 MB).
DOWNLOAD_SECONDS_PER_CHAR = 0.3
DOWNLOAD_BUFFER_SECONDS = 600.0
# OpenAI's built-in voice names: they speak as `default` unless a voice of that name is stored.
OPENAI_VOICES = frozenset(
    "alloy ash ballad cedar coral echo fable marin nova onyx sage shimmer verse".split()
)
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def upload_limits(app: web.Application) -> UploadLimits:
    settings = app[SETTINGS_KEY]
    return UploadLimits(settings.voice_max_bytes, settings.voice_max_seconds)


def pick_format(name: str | None, sample_rate: int | None) -> AudioFormat:
    """`response_format` (None: the default) as a format that encodes the engine's `sample_rate`
    (None while no engine has loaded: `encoder_for` checks again), else a 400 naming the param."""
    if name is None:
        default_works = DEFAULT_FORMAT in available_formats(sample_rate or PROBE_RATE)
        name = DEFAULT_FORMAT if default_works else DEFAULT_FORMAT_FALLBACK
    try:
        return require_format(name, sample_rate)
    except WorkerError as error:
        raise with_param(error, "response_format") from None


def loaded_rate(scheduler: Scheduler) -> int | None:
    """The loaded engine's sample rate; None while none has loaded (a request may queue meanwhile)."""
    return scheduler.info.sample_rate if scheduler.info is not None else None


def encoder_for(fmt: AudioFormat, sample_rate: int) -> StreamEncoder:
    """An encoder of `fmt` at the engine's rate, checked again: a request picked its format before
    the engine had loaded (UnsupportedFormat, before any byte is sent, rather than libsndfile's 500)."""
    return StreamEncoder(pick_format(fmt.name, sample_rate), sample_rate)


async def named_voice(scheduler: Scheduler, name: str) -> tuple[str | None, str | None]:
    """A voice name → (the stored voice to speak with, None for the default; the engine language it
    stands for, if it is one of espeak's); UnknownVoice when it is neither."""
    library = voice_library(scheduler)
    stored = await asyncio.to_thread(library.find, name)
    if stored is None and name.lower() in OPENAI_VOICES:
        stored = library.default  # clients that hard-code OpenAI's voices work unchanged
    if stored is not None:
        return (None if stored.name == DEFAULT_VOICE else stored.name), None
    if speaks_languages_as_voices(scheduler) and await engine_voice(scheduler, name):
        return None, name
    message = f"no voice named {name[:80]!r}; GET /v1/audio/voices lists them"
    raise with_param(UnknownVoice(message), "voice")


async def synth_params(
    app: web.Application,
    speech: SpeechRequest,
    gone: Callable[[], Awaitable[object]] | None = None,
    decoded: DecodedAudio | None = None,
) -> SynthParams:
    """Voice (stored name, espeak language voice) or ref_audio (path or inline) → engine parameters.
    `gone()` ends when the caller has gone: an inline ref_audio waiting for a decode slot waits no more
    (`DecodeSlots.run`). `decoded`: inline audio decoded already (a batch's default), not decoded again."""
    scheduler = app[SCHEDULER_KEY]
    library = voice_library(scheduler)
    lang, ref_wav, ref_text = speech.language, None, speech.ref_text
    if isinstance(speech.ref_audio, InlineAudio):
        if not ref_text or not ref_text.strip():
            raise with_param(BadRequest("ref_text (the transcript of ref_audio) is required"), "ref_text")
        data = speech.ref_audio.data
        wav = decoded.wav if decoded is not None and decoded.data == data else None
        try:
            ref_wav = await app[DECODE_SLOTS_KEY].run(  # bounded: a small file can be seconds of CPU
                library.store_inline,
                data,
                ref_text,
                upload_limits(app),
                scheduler.voice_user,
                wav,
                holding=len(data),  # (in the body budget while it waits for a slot)
                gone=gone,
            )
        except InvalidAudio as error:
            raise with_param(error, "ref_audio") from None
    elif speech.ref_audio is not None:
        ref_wav = speech.ref_audio  # a local path: the job core checks it against the allowed roots
    else:
        ref_wav, spoken_as = await named_voice(scheduler, speech.voice)
        lang = spoken_as or lang
    return SynthParams(
        lang=lang, speed_factor=speech.speed, ref_wav=ref_wav, ref_text=ref_text, seed=speech.seed
    )


async def prepare_speech(
    request: web.Request,
    body: bytes | dict[str, Any] | Any,
    gone: Callable[[], Awaitable[object]] | None = None,
    decoded: DecodedAudio | None = None,
) -> tuple[SpeechRequest, AudioFormat, SpeechRun]:
    """Validate everything, then queue the job: every mistake is a 4xx before any byte is sent.
    `gone`: as `synth_params`' (a batch's items have none: `all_unless_hung_up` stops them all at
    once, where an item that ended with its own hang-up would end the batch's wait before the others)."""
    scheduler = request.app[SCHEDULER_KEY]
    speech = parse_speech_request(body, request.app[LIMITS_KEY])
    del body  # (its bytes, up to --max-body-bytes, are not kept while an inline ref_audio waits to decode)
    check_model(scheduler, speech.model)
    fmt = pick_format(speech.response_format, loaded_rate(scheduler))
    params = await synth_params(request.app, speech, gone, decoded)
    limit = request.app[LIMITS_KEY].max_text_chars
    # a slower speed makes longer audio of the same text (the worker-wide AudioBudget still caps it all)
    unread_bound = max(DOWNLOAD_BUFFER_SECONDS, DOWNLOAD_SECONDS_PER_CHAR * limit / speech.speed)
    with fields_at_fault(speech, params):
        run = await start_speech(
            scheduler, speech.input, params, max_buffered_seconds=unread_bound, answers_at_done=True
        )
    run.reference_fields = reference_fields(speech)
    return speech, fmt, run


def reference_fields(speech: SpeechRequest) -> tuple[str, str]:
    """The fields that gave the reference voice's audio and its transcript (`SpeechRun.reference_fields`)."""
    audio = "ref_audio" if speech.ref_audio is not None else "voice"
    return audio, "ref_text" if speech.ref_text else audio


@contextlib.contextmanager
def fields_at_fault(speech: SpeechRequest, params: SynthParams) -> Iterator[None]:
    """What the job core refuses names its field: a reference path (RefWavNotAllowed) `ref_audio` when
    the caller gave one, a voice it cannot speak with (UnknownVoice) as `voice_refused` says, a
    language the engine lacks (UnknownLanguage) `language`."""
    try:
        yield
    except RefWavNotAllowed as error:
        raise (as_ref_audio(error) if speech.ref_audio is not None else error) from None
    except UnknownVoice as error:
        raise voice_refused(error, speech, params) from None
    except UnknownLanguage as error:
        raise with_param(error, "language") from None


def as_ref_audio(error: WorkerError) -> WorkerError:
    """The job core's refusal of a reference path (RefWavNotAllowed) in this route's words: its
    messages name v1's `ref_wav` (`ref_wav contains a NUL byte`), a field no OpenAI caller can send."""
    if error.message.startswith("ref_wav "):
        error = type(error)("ref_audio " + error.message.removeprefix("ref_wav "))
    return with_param(error, "ref_audio")


def voice_refused(error: WorkerError, speech: SpeechRequest | None, params: SynthParams) -> WorkerError:
    """The job core's UnknownVoice in this route's words (its own name v1's `ref_wav`, a field no OpenAI
    caller can send): a `ref_audio` that is neither an absolute path nor a stored voice's name, the
    default voice of a worker that has none (ZipVoice started without --ref-wav), or a stored voice
    deleted since it was looked up. `speech` None: the defaults (a stream socket never configured)."""
    if not isinstance(error, UnknownVoice):
        return error
    ref_audio = speech.ref_audio if speech is not None else None
    if isinstance(ref_audio, str):
        message = (
            f"no stored voice is named {ref_audio[:80]!r}; ref_audio takes an absolute path, a stored "
            "voice's name or a data: URL"
        )
        return with_param(UnknownVoice(message), "ref_audio")
    if ref_audio is not None:  # inline audio, stored moments ago
        return with_param(error, "ref_audio")
    if params.ref_wav is None:
        message = (
            "this worker has no default voice (it was started without --ref-wav): name a stored voice "
            "in voice (GET /v1/audio/voices lists them) or send ref_audio and ref_text"
        )
    else:
        message = f"no voice named {params.ref_wav[:80]!r}; GET /v1/audio/voices lists them"
    return with_param(UnknownVoice(message), "voice")


@openai_errors
async def create_speech(request: web.Request) -> web.StreamResponse:
    gone = functools.partial(until_caller_gone, request)  # (an inline ref_audio's wait for a decode slot)
    await wait_for_load(request)  # (an SDK's call during a restart takes longer, not a 503)
    speech, fmt, run = await prepare_speech(request, await read_body(request), gone)
    name_request(request, run.job.id)  # (its x-request-id: the job's id, as the log names it)
    sse = speech.stream_format == "sse"
    del speech  # (its inline ref_audio, decoded, out of the body budget: not kept while the audio streams)
    watch = asyncio.create_task(cancel_when_gone(request, run))
    try:
        if sse:
            return await stream_sse(request, run, fmt)
        return await stream_audio(request, run, fmt)
    finally:
        watch.cancel()
        run.cancel()  # a no-op once done; stops the engine when the caller hung up


async def cancel_when_gone(request: web.Request, run: SpeechRun) -> None:
    """Cancel `run` once its caller has gone (a request queued sends nothing: no failed write tells)."""
    await until_caller_gone(request)
    log.info("the caller of job %s hung up; its synthesis stops", run.job.id)
    await run.cancel_then_stop_at(until_closed(request))  # (a caller's FIN alone: it may yet read)


def answer_to_gone(response: web.StreamResponse) -> web.StreamResponse:
    """The answer to a caller that has gone: the response as it stands, or (none started: a whole-file
    format, a request still queued) ConnectionResetError, a 499 in the access log and metrics rather
    than an unstarted response aiohttp would send as an empty 200, or an error nobody reads."""
    if not response.prepared:
        raise ConnectionResetError("the caller hung up")
    return response


class JoinedWrites:
    """An answer's bytes made since its audio last waited, written together: one `write` once they
    hold BURST_BYTES, or when `flush` is called before anything that can wait (the next audio, an
    encoding on a thread), so nothing made waits unsent (as `/ws`'s bursts). The response starts at
    the first write: a failure before it is still an error response."""

    def __init__(self, request: web.Request, response: web.StreamResponse) -> None:
        self.request = request
        self.response = response
        self.waiting: list[bytes] = []
        self.size = 0

    async def add(self, data: bytes) -> None:
        if data:
            self.waiting.append(data)
            self.size += len(data)
            if self.size >= BURST_BYTES:
                await self.flush()

    async def flush(self) -> None:
        if self.waiting:
            if not self.response.prepared:
                await self.response.prepare(self.request)
            data, self.size = b"".join(self.waiting), 0
            self.waiting.clear()
            await send_within(self.request, self.response, data)

    async def feed(self, encoder: StreamEncoder, samples: np.ndarray) -> None:
        """`samples` encoded and added; what waits is written first when the encoding runs on a
        thread (opus: the loop could write meanwhile)."""
        if encoder.encodes_as_it_goes:
            await self.flush()
        await self.add(await encoder.feed_async(samples))


async def stream_audio(request: web.Request, run: SpeechRun, fmt: AudioFormat) -> web.StreamResponse:
    """The encoded audio, written as it is made (`JoinedWrites`). The response starts with the first
    write, so a failure before it is still a proper error response; after it the connection is cut
    (no half file)."""
    encoder = encoder_for(fmt, engine_info(request.app[SCHEDULER_KEY]).sample_rate)
    headers = {"Content-Type": fmt.content_type, REQUEST_ID_HEADER: request_id(request)}
    response = web.StreamResponse(headers=headers)
    writes = JoinedWrites(request, response)
    try:
        async for samples in run.audio(before_waiting=writes.flush):
            stop_if_closed(request)  # a whole-file format writes nothing until the end
            await writes.feed(encoder, samples)
        stop_if_closed(request)
        await writes.flush()  # the end is encoded on a thread (a whole flac file: the most time)
        tail = await encoder.finish_async()
        if not response.prepared:  # flac has none before the end: it answers whole
            response.content_length = len(tail)
            await response.prepare(request)
        await end_within(request, response, tail)
    except WorkerError as error:
        if caller_gone(request):
            return answer_to_gone(response)
        if not response.prepared:
            raise
        log.warning(
            "speech stream of job %s failed after it started (%s); cutting the connection", run.job.id, error
        )
        if request.transport is not None:
            request.transport.close()
    except ConnectionError as gone:
        log.info("the caller of job %s hung up; its synthesis stops", run.job.id)  # `create_speech` cancels
        forget_frames(gone)
        return answer_to_gone(response)
    finally:
        encoder.release()
        writes.waiting.clear()
        tail = b""  # noqa: F841 - this frame outlives the call in a hung-up caller's traceback
    return response


def forget_frames(error: BaseException) -> None:
    """A hung-up caller's error keeps the frames it passed through, and their audio, in a reference
    cycle (the connection's waiter holds the error) that only a full collection frees: let the frames
    go now."""
    traceback.clear_frames(error.__traceback__)


def speech_usage(text: str) -> dict[str, int]:
    """OpenAI's usage block: the text's characters as its tokens, no audio tokens; the total is their sum."""
    return {"input_tokens": len(text), "output_tokens": 0, "total_tokens": len(text)}


def sse_event(body: bytes) -> bytes:
    """One encoded message as a server-sent event."""
    return b"data: " + body + b"\n\n"


class SseEvents(JoinedWrites):
    """`JoinedWrites` of an SSE answer: what is added is a delta's audio, written as its event."""

    async def add(self, data: bytes) -> None:
        if data:  # flac has none before the end: a failure until then is an error response
            await super().add(sse_event(SpeechAudioDelta(base64.b64encode(data).decode()).encode()))


async def stream_sse(request: web.Request, run: SpeechRun, fmt: AudioFormat) -> web.StreamResponse:
    """`speech.audio.delta` events (base64 audio in the requested format), then `speech.audio.done`;
    a failure after the first event is an `error` event (OpenAI's error object), then the end."""
    sample_rate = engine_info(request.app[SCHEDULER_KEY]).sample_rate
    encoder = encoder_for(fmt, sample_rate)
    response = web.StreamResponse(headers={**SSE_HEADERS, REQUEST_ID_HEADER: request_id(request)})
    started = time.monotonic()
    events = SseEvents(request, response)
    try:
        async for samples in run.audio(before_waiting=events.flush):
            stop_if_closed(request)  # a whole-file format sends no delta until the end
            await events.feed(encoder, samples)
        stop_if_closed(request)
        await events.flush()  # the end is encoded on a thread too (a whole flac file: the most time)
        await events.add(await encoder.finish_async())
        await events.flush()
    except WorkerError as error:
        if caller_gone(request):
            return answer_to_gone(response)
        if not response.prepared and not events.waiting:
            raise
        try:
            await events.flush()  # the deltas made before the failure, then its event
            await end_within(request, response, sse_event(SpeechError(openai_error(error)[0]).encode()))
        except ConnectionError as gone:
            forget_frames(gone)
            return answer_to_gone(response)
        return response
    except ConnectionError as gone:
        log.info("the caller of job %s hung up; its synthesis stops", run.job.id)  # `create_speech` cancels
        forget_frames(gone)
        return answer_to_gone(response)
    finally:
        encoder.release()
    done = SpeechAudioDone(
        format=fmt.name,
        sample_rate=sample_rate,
        duration_sec=round(run.samples / sample_rate, 3),
        elapsed_sec=round(time.monotonic() - started, 3),
        usage=speech_usage(run.job.sections[0].text),
    )
    try:
        if not response.prepared:  # no audio at all
            await response.prepare(request)
        await end_within(request, response, sse_event(done.encode()))  # (one write with the end)
    except ConnectionError as gone:
        forget_frames(gone)
    return response
