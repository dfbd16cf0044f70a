"""POST /v1/audio/speech's checks: the body, format, voice and params of a speech request, every mistake a
4xx before its job is started (`prepare_speech`, which then starts it). Its answer, the audio as it is
made, is `speech_stream.py`'s; its batch form `speech_batch.py`, the models `models_api.py`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..app_keys import DECODE_SLOTS_KEY, LIMITS_KEY, SCHEDULER_KEY, SETTINGS_KEY
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
from .core import (
    SpeechRun,
    engine_voice,
    speaks_languages_as_voices,
    start_speech,
    voice_library,
)
from .errors import with_param
from .formats import (
    DEFAULT_FORMAT_FALLBACK,
    PROBE_RATE,
    AudioFormat,
    StreamEncoder,
    available_formats,
    require_format,
)
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
