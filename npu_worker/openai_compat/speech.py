"""POST /v1/audio/speech (bytes as they are made, or SSE), its batch form, and GET /v1/models."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from aiohttp import web

from .. import wire
from ..app_keys import LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY
from ..http_compat.bodies import json_response
from ..http_compat.hang_up import caller_gone, send_within, stop_if_caller_gone, until_caller_gone
from ..http_compat.request_body import read_body
from ..protocol import (
    BadRequest,
    InvalidAudio,
    RefWavNotAllowed,
    SynthParams,
    TextTooLong,
    TooManySections,
    UnknownLanguage,
    UnknownVoice,
    WorkerError,
)
from ..voices import DEFAULT_VOICE, UploadLimits
from .bodies import Model, ModelList, SpeechBatchResult, SpeechItem
from .core import (
    SpeechRun,
    engine_info,
    engine_voice,
    speaks_languages_as_voices,
    start_speech,
    voice_library,
)
from .errors import openai_error, openai_errors, openai_refusal, with_param
from .formats import (
    DEFAULT_FORMAT_FALLBACK,
    AudioFormat,
    StreamEncoder,
    available_formats,
    encode_whole,
    require_format,
)
from .messages import SpeechAudioDelta, SpeechAudioDone, SpeechError
from .request import (
    DEFAULT_FORMAT,
    InlineAudio,
    SpeechBatchBody,
    SpeechBody,
    SpeechRequest,
    parse_speech_request,
)

if TYPE_CHECKING:  # the job core loads when an app is built, not when it is imported
    from ..jobs.scheduler import Scheduler

log = logging.getLogger(__name__)

MODEL_ALIASES = ("tts-1", "tts-1-hd")
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


def model_ids(scheduler: Scheduler) -> list[str]:
    info = engine_info(scheduler)
    return list(dict.fromkeys([info.model, info.backend, *MODEL_ALIASES]))


def check_model(scheduler: Scheduler, model: str | None) -> None:
    accepted = model_ids(scheduler)
    if model is not None and model not in accepted:
        raise with_param(
            BadRequest(f"model {model[:80]!r} is not served; use one of {', '.join(accepted)}"), "model"
        )


def pick_format(name: str | None) -> AudioFormat:
    if name is None:
        name = DEFAULT_FORMAT if DEFAULT_FORMAT in available_formats() else DEFAULT_FORMAT_FALLBACK
    try:
        return require_format(name)
    except WorkerError as error:
        raise with_param(error, "response_format") from None


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


async def synth_params(app: web.Application, speech: SpeechRequest) -> SynthParams:
    """Voice (stored name, espeak language voice) or ref_audio (path or inline) → engine parameters."""
    scheduler = app[SCHEDULER_KEY]
    library = voice_library(scheduler)
    lang, ref_wav, ref_text = speech.language, None, speech.ref_text
    if isinstance(speech.ref_audio, InlineAudio):
        if not ref_text or not ref_text.strip():
            raise with_param(BadRequest("ref_text (the transcript of ref_audio) is required"), "ref_text")
        data = speech.ref_audio.data
        try:
            ref_wav = await asyncio.to_thread(
                library.store_inline, data, ref_text, upload_limits(app), scheduler.voice_user
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
    request: web.Request, body: bytes | dict[str, Any] | Any
) -> tuple[SpeechRequest, AudioFormat, SpeechRun]:
    """Validate everything, then queue the job: every mistake is a 4xx before any byte is sent."""
    scheduler = request.app[SCHEDULER_KEY]
    speech = parse_speech_request(body, request.app[LIMITS_KEY])
    check_model(scheduler, speech.model)
    fmt = pick_format(speech.response_format)
    params = await synth_params(request.app, speech)
    limit = request.app[LIMITS_KEY].max_text_chars
    # a slower speed makes longer audio of the same text (the worker-wide AudioBudget still caps it all)
    unread_bound = max(DOWNLOAD_BUFFER_SECONDS, DOWNLOAD_SECONDS_PER_CHAR * limit / speech.speed)
    with fields_at_fault(speech):
        run = await start_speech(scheduler, speech.input, params, max_buffered_seconds=unread_bound)
    run.reference_fields = reference_fields(speech)
    return speech, fmt, run


def reference_fields(speech: SpeechRequest) -> tuple[str, str]:
    """The fields that gave the reference voice's audio and its transcript (`SpeechRun.reference_fields`)."""
    audio = "ref_audio" if speech.ref_audio is not None else "voice"
    return audio, "ref_text" if speech.ref_text else audio


@contextlib.contextmanager
def fields_at_fault(speech: SpeechRequest) -> Iterator[None]:
    """What the job core refuses names its field: a reference path (RefWavNotAllowed) `ref_audio` when
    the caller gave one, a language the engine lacks (UnknownLanguage) `language`."""
    try:
        yield
    except RefWavNotAllowed as error:
        raise (with_param(error, "ref_audio") if speech.ref_audio is not None else error) from None
    except UnknownLanguage as error:
        raise with_param(error, "language") from None


@openai_errors
async def create_speech(request: web.Request) -> web.StreamResponse:
    speech, fmt, run = await prepare_speech(request, await read_body(request))
    watch = asyncio.create_task(cancel_when_gone(request, run))
    try:
        if speech.stream_format == "sse":
            return await stream_sse(request, run, fmt)
        return await stream_audio(request, run, fmt)
    finally:
        watch.cancel()
        run.cancel()  # a no-op once done; stops the engine when the caller hung up


async def cancel_when_gone(request: web.Request, run: SpeechRun) -> None:
    """Cancel `run` once its caller has gone: a request queued behind others sends nothing until its
    first audio, so no failed write would tell."""
    await until_caller_gone(request)
    log.info("the caller of job %s hung up; its synthesis stops", run.job.id)
    run.cancel()


def answer_to_gone(response: web.StreamResponse) -> web.StreamResponse:
    """The answer to a caller that has gone: the response as it stands, or (none started: a whole-file
    format, a request still queued) ConnectionResetError, a 499 in the access log and metrics rather
    than an unstarted response aiohttp would send as an empty 200, or an error nobody reads."""
    if not response.prepared:
        raise ConnectionResetError("the caller hung up")
    return response


async def stream_audio(request: web.Request, run: SpeechRun, fmt: AudioFormat) -> web.StreamResponse:
    """The encoded audio, written as it is made. The response starts with the first audio, so a
    failure before it is still a proper error response; after it the connection is cut (no half file)."""
    encoder = StreamEncoder(fmt, engine_info(request.app[SCHEDULER_KEY]).sample_rate)
    response = web.StreamResponse(headers={"Content-Type": fmt.content_type})
    try:
        async for samples in run.audio():
            stop_if_caller_gone(request)  # a whole-file format writes nothing until the end
            data = await encoder.feed_async(samples)
            if data:  # flac and mp3 have none before the end: they answer whole, or as an error
                if not response.prepared:
                    await response.prepare(request)
                await send_within(request, response, data)
        stop_if_caller_gone(request)
        tail = await encoder.finish_async()
        if not response.prepared:
            response.content_length = len(tail)
            await response.prepare(request)
        await send_within(request, response, tail)
        await response.write_eof()
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
        data = tail = b""  # noqa: F841 - this frame outlives the call in a hung-up caller's traceback
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


async def stream_sse(request: web.Request, run: SpeechRun, fmt: AudioFormat) -> web.StreamResponse:
    """`speech.audio.delta` events (base64 audio in the requested format), then `speech.audio.done`;
    a failure after the first event is an `error` event (OpenAI's error object), then the end."""
    sample_rate = engine_info(request.app[SCHEDULER_KEY]).sample_rate
    encoder = StreamEncoder(fmt, sample_rate)
    response = web.StreamResponse(headers=SSE_HEADERS)
    started = time.monotonic()

    async def delta(data: bytes) -> None:
        if data:  # flac and mp3 have none before the end: a failure until then is an error response
            if not response.prepared:
                await response.prepare(request)
            event = sse_event(SpeechAudioDelta(base64.b64encode(data).decode()).encode())
            await send_within(request, response, event)

    try:
        async for samples in run.audio():
            stop_if_caller_gone(request)  # a whole-file format sends no delta until the end
            await delta(await encoder.feed_async(samples))
        stop_if_caller_gone(request)
        await delta(await encoder.finish_async())
    except WorkerError as error:
        if caller_gone(request):
            return answer_to_gone(response)
        if not response.prepared:
            raise
        await response.write(sse_event(SpeechError(openai_error(error)[0]).encode()))
        await response.write_eof()
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
    with contextlib.suppress(ConnectionError):
        if not response.prepared:  # no audio at all
            await response.prepare(request)
        await response.write(sse_event(done.encode()))
        await response.write_eof()
    return response


@openai_errors
async def list_models(request: web.Request) -> web.Response:
    ids = model_ids(request.app[SCHEDULER_KEY])
    return json_response(ModelList(data=[Model(i) for i in ids]))


@openai_errors
async def get_model(request: web.Request) -> web.Response:
    """One model of `list_models` (SDKs' `models.retrieve`); another is a 404, as an unknown path."""
    name = request.match_info["model"]
    ids = model_ids(request.app[SCHEDULER_KEY])
    if name not in ids:
        error = BadRequest(f"model {name[:80]!r} is not served; use one of {', '.join(ids)}")
        return openai_refusal(with_param(error, "model"), 404)
    return json_response(Model(name))


# -- batch ------------------------------------------------------------------------------------------

BATCH_MAX_ITEMS = 64  # every item's audio is held until the answer is written: bound the memory
BATCH_TEXT_FACTOR = 4  # a batch's inputs together: at most 4 x --max-text-chars characters


async def batch_item(request: web.Request, index: int, body: Any) -> SpeechItem:
    """One item: its audio base64-encoded, or its error (OpenAI's error object); never raises."""
    try:
        if not isinstance(body, dict):  # a string item is not a body to read as JSON: only objects are
            wire.convert(body, SpeechBody)  # BadRequest: Expected `object`, got `str`
        speech, fmt, run = await prepare_speech(request, body)
        try:
            chunks = [samples async for samples in run.audio()]
        finally:
            run.cancel()
        sample_rate = engine_info(request.app[SCHEDULER_KEY]).sample_rate
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        # The whole file at once: a wav's header then says its real length (a stream's cannot).
        data = await asyncio.to_thread(encode_whole, audio, sample_rate, fmt)
    except WorkerError as error:
        return SpeechItem(index=index, status="error", error=openai_error(error)[0])
    return SpeechItem(
        index=index,
        status="success",
        format=fmt.name,
        sample_rate=sample_rate,
        duration_sec=round(run.samples / sample_rate, 3),
        audio_data=base64.b64encode(data).decode(),
    )


async def unless_hung_up(request: web.Request, work: asyncio.Future[list[SpeechItem]]) -> list[SpeechItem]:
    """The batch's items, or ConnectionResetError once its caller has gone: the answer is written only
    at the end, so no failed write would tell, and the items (cancelled with `work`) would keep the
    engine busy for nobody."""
    gone = asyncio.ensure_future(until_caller_gone(request))
    racing: list[asyncio.Future[Any]] = [work, gone]
    try:
        await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            log.info("the caller of a speech batch hung up; its items stop")
            raise ConnectionResetError("the caller hung up")
        return work.result()
    finally:
        work.cancel()  # a no-op once done
        gone.cancel()


@openai_errors
async def create_speech_batch(request: web.Request) -> web.StreamResponse:
    """vLLM-Omni's batch: `items` (each a speech request), top-level fields as defaults for each."""
    body: SpeechBatchBody = wire.decode(await read_body(request), SpeechBatchBody)
    items = body.items
    limits = request.app[LIMITS_KEY]
    limit = min(limits.max_sections, BATCH_MAX_ITEMS)
    if len(items) > limit:
        raise with_param(TooManySections(f"{len(items)} items, the limit is {limit}"), "items")
    texts = [item.get("input") for item in items if isinstance(item, dict)]
    characters = sum(len(text) for text in texts if isinstance(text, str))
    if characters > BATCH_TEXT_FACTOR * limits.max_text_chars:
        bound = BATCH_TEXT_FACTOR * limits.max_text_chars
        message = f"the items have {characters} characters together, the limit is {bound}"
        raise with_param(TextTooLong(message), "items")
    scheduler = request.app[SCHEDULER_KEY]
    scheduler.check_accepting()  # a node that serves none: one refusal, not one per item
    check_model(scheduler, body.model)  # a default every item would fail on: one 400
    if body.response_format is not None:
        pick_format(body.response_format)
    if body.voice_is_used():
        await named_voice(scheduler, body.voice_name())
    merged = body.merged_items()
    results = await unless_hung_up(
        request, asyncio.gather(*(batch_item(request, i, item) for i, item in enumerate(merged)))
    )
    failed = sum(result.status != "success" for result in results)
    answer = SpeechBatchResult(
        results=results, total=len(results), succeeded=len(results) - failed, failed=failed
    )
    # Every item's audio in one body (up to about 120 MB): written under the same deadline as a file,
    # so a caller that never reads it does not keep it in memory for as long as its socket is open.
    encoded = wire.encode(answer)
    del results, answer
    response = web.StreamResponse(headers={"Content-Type": "application/json; charset=utf-8"})
    response.content_length = len(encoded)
    await response.prepare(request)
    try:
        await send_within(request, response, encoded)
        await response.write_eof()
    except ConnectionError as gone:
        log.info("the caller of a speech batch went away before its answer was read: %s", gone)
        forget_frames(gone)
    finally:
        encoded = b""  # noqa: F841 - this frame outlives the call in a hung-up caller's traceback
    return response
