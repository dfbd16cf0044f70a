"""The wire contract of PROTOCOL v1: events and request bodies as msgspec Structs, and what they mean.

Pure code (no I/O, no aiohttp): the HTTP views, the WebSocket views, the job log and the clients all
speak through these classes, so one event schema serves NDJSON lines, WebSocket text frames and the
log, and `openapi.py` documents the same classes that validate. A request body decodes straight into
its Struct (`wire.decode`: types, ranges and the hostile cases in one pass); the parse functions then
check what depends on the configuration (text length, section count) and hand the views the frozen
request objects the job core keeps. The error names live in `errors.py`; they are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from . import wire
from .errors import (
    AudioNotFound,
    BadRequest,
    BodyBudgetFull,
    BodyTooLarge,
    Busy,
    DecodersBusy,
    DuplicateIndex,
    EmptyText,
    EngineError,
    ErrorBody,
    InternalError,
    InvalidAudio,
    JobNotFound,
    Loading,
    ModelLoadError,
    NodeRestarting,
    NotRunning,
    OriginNotAllowed,
    OutputPathNotAllowed,
    QueueFull,
    QueueUnavailable,
    RefWavNotAllowed,
    RequestTimeout,
    ShuttingDown,
    SlowConsumer,
    StateUnavailable,
    TextTooLong,
    TooManySections,
    TooManyVoices,
    Unauthorized,
    UnknownLanguage,
    UnknownMessage,
    UnknownVoice,
    Unsupported,
    UnsupportedFormat,
    VoiceExists,
    VoiceInUse,
    VoiceNotFound,
    WorkerError,
    WriteFailed,
    error_body,
    error_names,
)

__all__ = [  # the error names are part of the contract: importable from here as they always were
    "AudioNotFound",
    "BadRequest",
    "BodyBudgetFull",
    "BodyTooLarge",
    "Busy",
    "DecodersBusy",
    "DuplicateIndex",
    "EmptyText",
    "EngineError",
    "ErrorBody",
    "InternalError",
    "InvalidAudio",
    "JobNotFound",
    "Loading",
    "ModelLoadError",
    "NodeRestarting",
    "NotRunning",
    "OriginNotAllowed",
    "OutputPathNotAllowed",
    "QueueFull",
    "QueueUnavailable",
    "RefWavNotAllowed",
    "RequestTimeout",
    "ShuttingDown",
    "SlowConsumer",
    "StateUnavailable",
    "TextTooLong",
    "TooManySections",
    "Unauthorized",
    "UnknownLanguage",
    "UnknownMessage",
    "UnknownVoice",
    "Unsupported",
    "UnsupportedFormat",
    "TooManyVoices",
    "VoiceExists",
    "VoiceInUse",
    "VoiceNotFound",
    "WorkerError",
    "WriteFailed",
    "error_body",
    "error_names",
]

# --------------------------------------------------------------------------------------------------
# Events: one Struct per wire name (`"event": name` first). A field whose default is None is left off
# the wire while None (`omit_defaults` on exactly the classes whose optional fields default to None;
# tests/test_wire.py checks that no class mixes the two kinds); `seq` is added by the job log.


class Event(msgspec.Struct, tag_field="event"):
    """A job event or a stream event; `wire_name` is its `event` value."""

    @property
    def wire_name(self) -> str:
        return str(self.__struct_config__.tag)

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> Event:
        if body.get("event") not in EVENT_CLASSES:
            raise BadRequest(f"unknown event kind {body.get('event')!r}")
        return wire.convert(body, AnyEvent)

    def encode(self) -> bytes:
        """The event as sent on its own (no `seq`): a stream event, or a request-level error."""
        return wire.encode(self)


class Start(Event, tag="start", omit_defaults=True):
    total: int
    backend: str
    device: str
    job_id: str
    sample_rate: int | None = None


class Progress(Event, tag="progress", omit_defaults=True):
    """`status` is "synth" when a section starts and "ok" when its audio exists."""

    idx: int
    status: Literal["synth", "ok"]
    wav_path: str | None = None
    duration_sec: float | None = None
    elapsed_sec: float | None = None
    cached: bool | None = None


class SectionError(Event, tag="error"):
    """A section's failure (`idx`), or a request-level refusal on /ws (`idx: null`)."""

    idx: int | None
    error: Annotated[str, Meta(description="`Name: message`, as in the error body")]
    status: Literal["fail"] = "fail"


class Done(Event, tag="done"):
    total: int
    ok_count: int
    fail_count: int
    elapsed_total_sec: float
    cancelled: bool = False


class Heartbeat(Event, tag="heartbeat", omit_defaults=True):
    elapsed_sec: float | None = None


class AudioStart(Event, tag="audio_start"):
    idx: int
    sample_rate: int
    format: str = "pcm_s16le"
    channels: int = 1


class AudioEnd(Event, tag="audio_end"):
    idx: int
    samples: int
    chunks: int


class FirstAudio(Event, tag="first_audio"):
    idx: int
    ttfa_ms: float


AnyEvent = Start | Progress | SectionError | Done | Heartbeat | AudioStart | AudioEnd | FirstAudio
_EVENTS: tuple[type[Event], ...] = (
    Start,
    Progress,
    SectionError,
    Done,
    Heartbeat,
    AudioStart,
    AudioEnd,
    FirstAudio,
)
EVENT_CLASSES = {str(c.__struct_config__.tag): c for c in _EVENTS}


def decode_event(raw: bytes | str) -> Event:
    """A stored event (a job log line, a Redis log entry); MsgspecError if it is not one."""
    return _EVENT_DECODER.decode(raw)


_EVENT_DECODER: msgspec.json.Decoder[Event] = msgspec.json.Decoder(AnyEvent)

# --------------------------------------------------------------------------------------------------
# Requests as the job core keeps them


@dataclass(frozen=True)
class Limits:
    max_text_chars: int = 2000
    max_sections: int = 1000
    sections_bound_by: str = ""  # the setting `max_sections` comes from, as a refusal names it


@dataclass(frozen=True)
class SectionRequest:
    idx: int
    text: str
    output_path: str | None = None


DEFAULT_LANG = "ko"
DEFAULT_SPEED = 1.0
MAX_SEED = 2**32 - 1  # what every engine's random generator accepts
MAX_TRANSCRIPT_CHARS = 1000  # a reference voice's transcript: a few seconds of speech, with room to spare
MAX_INDEX = 2**31 - 1  # a section label any client holds as an int, and a short file name
# A reference voice (`ref_wav`) is seconds of speech; 64 MiB is six minutes of 48 kHz 16-bit stereo.
# A larger file is refused before it is read: the caller names the path, and reading a huge file whole
# could end the worker.
MAX_REFERENCE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class SynthParams:
    """Everything besides the text that changes the audio of a section."""

    lang: str = DEFAULT_LANG
    speed_factor: float = DEFAULT_SPEED
    ref_wav: str | None = None
    ref_text: str | None = None
    seed: int | None = None


@dataclass(frozen=True)
class SynthRequest:
    """POST /synth: one text, one wav (sovits_worker-compatible)."""

    text: str
    output_path: str
    params: SynthParams = field(default_factory=SynthParams)


@dataclass(frozen=True)
class BatchRequest:
    """POST /synth_batch and the WebSocket `synth_batch`/`synth` messages."""

    sections: tuple[SectionRequest, ...]
    params: SynthParams = field(default_factory=SynthParams)
    stream: bool = True
    audio: bool = True


@dataclass(frozen=True)
class CancelRequest:
    """WebSocket `cancel` message."""


# --------------------------------------------------------------------------------------------------
# Request bodies: unknown fields are ignored, and null stands for a field's default (as it always has).

Lang = Annotated[str, Meta(max_length=32, pattern=r"\S", description="a language code such as 'ko'")]
Speed = Annotated[float, Meta(ge=0.25, le=4.0)]
Seed = Annotated[int, Meta(ge=0, le=MAX_SEED)]
RefText = Annotated[
    str, Meta(max_length=MAX_TRANSCRIPT_CHARS, description="the transcript of the reference voice (ZipVoice)")
]
Index = Annotated[int, Meta(ge=0, le=MAX_INDEX, description="default: the section's position")]
AllowedPath = Annotated[str, Meta(description="an absolute path under the allowed roots")]
# An output path may not be blank (`"  "` was told it is not absolute); /ws's own is `ws_messages.py`'s.
OutputPath = Annotated[
    str, Meta(min_length=1, pattern=r"\S", description="an absolute path under the allowed roots")
]


class ParamsBody(msgspec.Struct, kw_only=True):
    """The fields that change a section's audio besides its text."""

    lang: Lang | None = DEFAULT_LANG
    speed_factor: Speed | None = DEFAULT_SPEED
    ref_wav: (
        Annotated[
            str,
            Meta(min_length=1, pattern=r"\S", description="a voice name, or a wav under the allowed roots"),
        ]
        | None
    ) = None
    ref_text: RefText | None = None
    seed: Seed | None = None

    def params(self) -> SynthParams:
        return SynthParams(
            lang=self.lang if self.lang is not None else DEFAULT_LANG,
            speed_factor=self.speed_factor if self.speed_factor is not None else DEFAULT_SPEED,
            ref_wav=self.ref_wav,
            ref_text=self.ref_text,
            seed=self.seed,
        )


class SynthBody(ParamsBody, kw_only=True):
    """POST /synth."""

    text: Annotated[str, Meta(description="1 to --max-text-chars characters (EmptyText, TextTooLong)")]
    output_path: OutputPath


class SectionBody(msgspec.Struct, kw_only=True):
    """One section of a batch; its text is checked when the section runs (an `error` event)."""

    idx: Index | None = None
    text: str
    output_path: (
        Annotated[
            str, Meta(min_length=1, pattern=r"\S", description="default: <state>/outputs/<job_id>/sNN.wav")
        ]
        | None
    ) = None


class BatchBody(ParamsBody, kw_only=True):
    """POST /synth_batch (and the body of the WebSocket `synth_batch` message)."""

    sections: Annotated[Sequence[SectionBody], Meta(min_length=1)]
    stream: bool | None = True
    audio: Annotated[bool | None, Meta(description="WebSocket: send the PCM frames")] = True

    def request(self, limits: Limits) -> BatchRequest:
        return BatchRequest(
            sections=_sections(self.sections, limits),
            params=self.params(),
            stream=self.stream is not False,
            audio=self.audio is not False,
        )


def check_text(text: str, limits: Limits) -> str:
    """Raise EmptyText/TextTooLong for text a section cannot be synthesised from."""
    if not text.strip():
        raise EmptyText("text is empty")
    if len(text) > limits.max_text_chars:
        raise TextTooLong(f"text has {len(text)} characters, the limit is {limits.max_text_chars}")
    return text


def _sections(raw: Sequence[SectionBody], limits: Limits) -> tuple[SectionRequest, ...]:
    """Positions as default indices, no index twice, at most `max_sections`."""
    if len(raw) > limits.max_sections:
        bound = f"{limits.max_sections}{limits.sections_bound_by}"
        raise TooManySections(f"{len(raw)} sections, the limit is {bound}")
    sections: list[SectionRequest] = []
    seen: set[int] = set()
    for position, item in enumerate(raw):
        idx = item.idx if item.idx is not None else position
        if idx in seen:
            raise DuplicateIndex(f"idx {idx} appears twice")
        seen.add(idx)
        sections.append(SectionRequest(idx, item.text, item.output_path))
    return tuple(sections)


def decode_json(raw: bytes | str) -> Any:
    """A caller's JSON document of any shape, or BadRequest (with the hostile cases refused)."""
    return wire.decode(raw, Any)


def parse_synth_request(body: bytes | str | Any, limits: Limits) -> SynthRequest:
    """Validate a /synth body; a problem with the text is a 400 for the whole request here."""
    parsed: SynthBody = wire.load(body, SynthBody)
    return SynthRequest(check_text(parsed.text, limits), parsed.output_path, parsed.params())


def parse_batch_request(body: bytes | str | Any, limits: Limits) -> BatchRequest:
    parsed: BatchBody = wire.load(body, BatchBody)
    return parsed.request(limits)
