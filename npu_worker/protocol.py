"""The wire contract of PROTOCOL v1: error names, events and requests, validated at the edge.

Pure code (no I/O, no aiohttp): the HTTP views, the WebSocket views, the job log and the clients all
speak through these classes, so one event schema serves NDJSON lines, WebSocket text frames and the log.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

# --------------------------------------------------------------------------------------------------
# Errors: one class per stable error name; the name is the first word of every `error` string.


class WorkerError(Exception):
    """Base of every error the worker reports by name (`"Name: message"`)."""

    name: ClassVar[str] = "WorkerError"
    http_status: ClassVar[int] = 500

    def __init__(self, message: str, *, fallback: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fallback = fallback

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


def _error(name: str, status: int, doc: str) -> type[WorkerError]:
    return type(name, (WorkerError,), {"name": name, "http_status": status, "__doc__": doc})


BadRequest = _error("BadRequest", 400, "The request body is malformed or has wrong types.")
EmptyText = _error("EmptyText", 400, "A text is empty or only whitespace.")
TextTooLong = _error("TextTooLong", 400, "A text exceeds the configured character limit.")
DuplicateIndex = _error("DuplicateIndex", 400, "Two sections of one batch share an idx.")
TooManySections = _error("TooManySections", 400, "A batch has more sections than allowed.")
OutputPathNotAllowed = _error("OutputPathNotAllowed", 400, "output_path is outside the allowed roots.")
RefWavNotAllowed = _error("RefWavNotAllowed", 400, "ref_wav is outside the allowed roots or missing.")
UnknownLanguage = _error("UnknownLanguage", 400, "The engine has no voice for the requested lang.")
Unauthorized = _error("Unauthorized", 401, "A token is configured and the request lacks it.")
OriginNotAllowed = _error("OriginNotAllowed", 403, "The browser origin is not in the allowed list.")
JobNotFound = _error("JobNotFound", 404, "No job with this id.")
BodyTooLarge = _error("BodyTooLarge", 413, "The request body exceeds the configured size.")
RequestTimeout = _error("RequestTimeout", 408, "The request body did not arrive in time.")
QueueFull = _error("QueueFull", 429, "The scheduler queue is at its bound; retry later.")
ModelLoadError = _error("ModelLoadError", 500, "The engine could not load its model files.")
EngineError = _error("EngineError", 500, "The engine failed while synthesising.")
WriteFailed = _error("WriteFailed", 500, "The wav could not be written.")
Loading = _error("Loading", 503, "The worker is still loading its engine.")
Busy = _error("Busy", 409, "A WebSocket connection already runs a request.")
NotRunning = _error("NotRunning", 409, "Cancel was sent while no request runs.")
SlowConsumer = _error(
    "SlowConsumer", 429, "A listener let too much audio pile up unread; its request was cancelled."
)
UnknownMessage = _error("UnknownMessage", 400, "A WebSocket message has an unknown type.")
AudioNotFound = _error("AudioNotFound", 404, "The section has no audio (not made yet, failed, or removed).")
QueueUnavailable = _error("QueueUnavailable", 503, "The shared job queue (Redis) cannot be reached.")
Unsupported = _error("Unsupported", 501, "This node does not offer the request (its role or queue mode).")
UnknownVoice = _error("UnknownVoice", 400, "No voice of this name (stored, default or engine voice).")
VoiceNotFound = _error("VoiceNotFound", 404, "No stored voice of this name to delete.")
VoiceExists = _error("VoiceExists", 409, "A voice of this name is already stored.")
InvalidAudio = _error("InvalidAudio", 400, "Audio that cannot be decoded or breaks the upload limits.")
UnsupportedFormat = _error("UnsupportedFormat", 400, "A response format this worker cannot encode.")


def error_names() -> list[str]:
    """Every stable error name this module defines (for the OpenAPI document and the fuzzer)."""
    found = {
        value.name
        for value in globals().values()
        if isinstance(value, type) and issubclass(value, WorkerError)
    }
    return sorted(found - {WorkerError.name})


def error_body(error: BaseException, traceback: str | None = None) -> dict[str, Any]:
    """The fixed error body of PROTOCOL §1 for any exception."""
    if isinstance(error, WorkerError):
        text, fallback = str(error), error.fallback
    else:
        text, fallback = f"{type(error).__name__}: {error}", None
    return {"status": "fail", "error": text, "traceback": traceback, "fallback": fallback}


# --------------------------------------------------------------------------------------------------
# Events: one dataclass per wire name, symmetric to_dict/from_dict; None-valued optional fields are
# left off the wire.


def wire_fields(message: Any) -> dict[str, Any]:
    """A message dataclass's fields for the wire: optional fields (default None) left off when None."""
    body: dict[str, Any] = {}
    for f in dataclasses.fields(message):
        value = getattr(message, f.name)
        if value is None and f.default is None:
            continue
        body[f.name] = value
    return body


@dataclass
class Event:
    wire_name: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.wire_name, **wire_fields(self)}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> Event:
        event_class = EVENT_CLASSES.get(body.get("event", ""))
        if event_class is None:
            raise BadRequest(f"unknown event kind {body.get('event')!r}")
        names = {f.name for f in dataclasses.fields(event_class)}
        return event_class(**{k: v for k, v in body.items() if k in names})


@dataclass
class Start(Event):
    wire_name: ClassVar[str] = "start"
    total: int
    backend: str
    device: str
    job_id: str
    sample_rate: int | None = None


@dataclass
class Progress(Event):
    """`status` is "synth" when a section starts and "ok" when its audio exists."""

    wire_name: ClassVar[str] = "progress"
    idx: int
    status: str
    wav_path: str | None = None
    duration_sec: float | None = None
    elapsed_sec: float | None = None
    cached: bool | None = None


@dataclass
class SectionError(Event):
    wire_name: ClassVar[str] = "error"
    idx: int | None
    error: str
    status: str = "fail"


@dataclass
class Done(Event):
    wire_name: ClassVar[str] = "done"
    total: int
    ok_count: int
    fail_count: int
    elapsed_total_sec: float
    cancelled: bool = False


@dataclass
class Heartbeat(Event):
    wire_name: ClassVar[str] = "heartbeat"
    elapsed_sec: float | None = None


@dataclass
class AudioStart(Event):
    wire_name: ClassVar[str] = "audio_start"
    idx: int
    sample_rate: int
    format: str = "pcm_s16le"
    channels: int = 1


@dataclass
class AudioEnd(Event):
    wire_name: ClassVar[str] = "audio_end"
    idx: int
    samples: int
    chunks: int


@dataclass
class FirstAudio(Event):
    wire_name: ClassVar[str] = "first_audio"
    idx: int
    ttfa_ms: float


EVENT_CLASSES: dict[str, type[Event]] = {
    c.wire_name: c for c in (Start, Progress, SectionError, Done, Heartbeat, AudioStart, AudioEnd, FirstAudio)
}

# --------------------------------------------------------------------------------------------------
# Requests


@dataclass(frozen=True)
class Limits:
    max_text_chars: int = 2000
    max_sections: int = 1000


@dataclass(frozen=True)
class SectionRequest:
    idx: int
    text: str
    output_path: str | None = None


@dataclass(frozen=True)
class SynthParams:
    """Everything besides the text that changes the audio of a section."""

    lang: str = "ko"
    speed_factor: float = 1.0
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


def decode_json(raw: bytes | str) -> Any:
    """A caller's JSON document, or BadRequest: the one parser for HTTP bodies and WebSocket messages.

    Besides syntax, the hostile cases are named here so they never surface as a 500: bytes that are not
    UTF-8, nesting deeper than the parser's recursion limit, and integers longer than Python's
    4300-digit conversion limit (json raises a bare ValueError for those).
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        body = json.loads(text)
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise BadRequest("invalid JSON: nested too deeply") from None
    except ValueError:  # an integer with more digits than int() converts
        raise BadRequest("invalid JSON: a number has too many digits") from None
    if SURROGATE_ESCAPE.search(text):  # only an escape can spell a lone surrogate; pairs are fine
        where = _lone_surrogate_at(body)
        if where is not None:
            # No file name, log line or frame can carry one: refuse the document here, once.
            raise BadRequest(f"{where or 'the body'} holds a lone surrogate (not valid Unicode)")
    return body


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate_at(body: Any) -> str | None:
    """The dotted path of the first string (or key) that is not valid Unicode, else None.

    Iterative: the document may be nested nearly as deep as the parser allows."""
    stack: list[tuple[str, Any]] = [("", body)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if not _is_unicode(value):
                return where
        elif isinstance(value, dict):
            for key, item in value.items():
                if not _is_unicode(key):
                    return where or "a key"
                stack.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    return None


def _require_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def _typed(body: dict[str, Any], key: str, kinds: tuple[type, ...], default: Any = None) -> Any:
    value = body.get(key, default)
    if value is None:
        return default
    # bool is an int subclass: never accept it where a number is asked for.
    if isinstance(value, bool) and bool not in kinds:
        raise BadRequest(f"{key} has the wrong type (bool)")
    if not isinstance(value, kinds):
        names = "/".join(k.__name__ for k in kinds)
        raise BadRequest(f"{key} must be {names}, got {type(value).__name__}")
    return value


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(text: str, limits: Limits) -> str:
    """Raise EmptyText/TextTooLong for text a section cannot be synthesised from."""
    if not text.strip():
        raise EmptyText("text is empty")
    if len(text) > limits.max_text_chars:
        raise TextTooLong(f"text has {len(text)} characters, the limit is {limits.max_text_chars}")
    return text


def parse_params(body: dict[str, Any]) -> SynthParams:
    speed = _typed(body, "speed_factor", (int, float), 1.0)
    if not math.isfinite(speed) or not 0.25 <= speed <= 4.0:
        raise BadRequest(f"speed_factor must be between 0.25 and 4.0, got {speed}")
    lang = _typed(body, "lang", (str,), "ko")
    if not lang.strip() or len(lang) > 32:
        raise BadRequest("lang must be a short language code such as 'ko'")
    return SynthParams(
        lang=lang,
        speed_factor=float(speed),
        ref_wav=_typed(body, "ref_wav", (str,)) or None,
        ref_text=_typed(body, "ref_text", (str,)),
        seed=_seed(body),
    )


MAX_SEED = 2**32 - 1  # what every engine's random generator accepts


def _seed(body: dict[str, Any]) -> int | None:
    seed = _typed(body, "seed", (int,))
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise BadRequest(f"seed must be between 0 and {MAX_SEED}, got {seed}")
    return seed


def parse_synth_request(body: Any, limits: Limits) -> SynthRequest:
    """Validate a /synth body; a problem with the text is a 400 for the whole request here."""
    body = _require_object(body)
    text = _typed(body, "text", (str,))
    if text is None:
        raise BadRequest("text is required")
    output_path = _typed(body, "output_path", (str,))
    if not output_path:
        raise BadRequest("output_path is required")
    return SynthRequest(text=check_text(text, limits), output_path=output_path, params=parse_params(body))


def parse_sections(raw: Any, limits: Limits) -> tuple[SectionRequest, ...]:
    """Validate the structure of `sections`; text content is checked per section when it runs."""
    if not isinstance(raw, list) or not raw:
        raise BadRequest("sections must be a non-empty list")
    if len(raw) > limits.max_sections:
        raise TooManySections(f"{len(raw)} sections, the limit is {limits.max_sections}")
    sections: list[SectionRequest] = []
    seen: set[int] = set()
    for position, item in enumerate(raw):
        if not isinstance(item, dict):
            raise BadRequest(f"sections[{position}] must be an object")
        idx = _typed(item, "idx", (int,), position)
        if idx < 0:
            raise BadRequest(f"sections[{position}].idx must be >= 0")
        if idx in seen:
            raise DuplicateIndex(f"idx {idx} appears twice")
        seen.add(idx)
        text = _typed(item, "text", (str,))
        if text is None:
            raise BadRequest(f"sections[{position}].text is required")
        sections.append(SectionRequest(idx, text, _typed(item, "output_path", (str,)) or None))
    return tuple(sections)


def parse_batch_request(body: Any, limits: Limits) -> BatchRequest:
    body = _require_object(body)
    return BatchRequest(
        sections=parse_sections(body.get("sections"), limits),
        params=parse_params(body),
        stream=_typed(body, "stream", (bool,), True),
        audio=_typed(body, "audio", (bool,), True),
    )


def parse_ws_message(body: Any, limits: Limits) -> BatchRequest | CancelRequest:
    """A client→server WebSocket text message (PROTOCOL §6)."""
    body = _require_object(body)
    kind = body.get("type")
    if kind == "cancel":
        return CancelRequest()
    if kind == "synth_batch":
        return parse_batch_request(body, limits)
    if kind == "synth":
        text = _typed(body, "text", (str,))
        if text is None:
            raise BadRequest("text is required")
        section = SectionRequest(0, text, _typed(body, "output_path", (str,)) or None)
        return BatchRequest(
            sections=(section,), params=parse_params(body), audio=_typed(body, "audio", (bool,), True)
        )
    raise UnknownMessage(f"unknown message type {kind!r}")
