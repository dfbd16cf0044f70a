"""The speech request of the OpenAI API (and the fields vLLM-Omni adds), validated at the edge.

Pure code: each problem is a named error carrying OpenAI's `param`, so the client sees which field.
"""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass
from typing import Any

from ..protocol import BadRequest, EmptyText, Limits, TextTooLong, WorkerError
from .errors import with_param

STREAM_FORMATS = ("audio", "sse")
DEFAULT_FORMAT = "mp3"  # OpenAI's default; `speech.py` falls back to wav where mp3 cannot be encoded
MAX_FIELD_CHARS = 4096


@dataclass(frozen=True)
class InlineAudio:
    """A `data:` URL's decoded bytes (checked by decoding them later, off the event loop)."""

    data: bytes


@dataclass(frozen=True)
class SpeechRequest:
    model: str | None
    input: str
    voice: str
    response_format: str | None
    speed: float
    stream_format: str
    language: str
    ref_audio: str | InlineAudio | None = None
    ref_text: str | None = None
    seed: int | None = None


def _field(body: dict[str, Any], key: str, kinds: tuple[type, ...], default: Any = None) -> Any:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        names = "/".join(k.__name__ for k in kinds)
        raise with_param(BadRequest(f"{key} must be {names}, got {type(value).__name__}"), key)
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS and key != "ref_audio":
        raise with_param(BadRequest(f"{key} is longer than {MAX_FIELD_CHARS} characters"), key)
    return value


def _text(body: dict[str, Any], limits: Limits) -> str:
    text = body.get("input")
    if not isinstance(text, str):
        raise with_param(BadRequest("input is required and must be a string"), "input")
    error: WorkerError | None = None
    if not text.strip():
        error = EmptyText("input is empty")
    elif len(text) > limits.max_text_chars:
        error = TextTooLong(f"input has {len(text)} characters, the limit is {limits.max_text_chars}")
    if error is not None:
        raise with_param(error, "input")
    return text


def _voice(body: dict[str, Any]) -> str:
    voice = body.get("voice", "default")
    if isinstance(voice, dict):  # newer SDKs may send {"id": "..."}
        voice = voice.get("id")
    if not isinstance(voice, str) or not voice.strip():
        raise with_param(BadRequest("voice must be a non-empty string"), "voice")
    return voice.strip()


def _speed(body: dict[str, Any]) -> float:
    speed = _field(body, "speed", (int, float), 1.0)
    if not math.isfinite(speed) or not 0.25 <= speed <= 4.0:
        raise with_param(BadRequest(f"speed must be between 0.25 and 4.0, got {speed}"), "speed")
    return float(speed)


def parse_ref_audio(value: str | None) -> str | InlineAudio | None:
    """A local path (checked against the allowed roots later) or a base64 `data:` URL."""
    if value is None or not value.strip():
        return None
    if not value.startswith("data:"):
        return value
    header, comma, payload = value.partition(",")
    if not comma or not header.endswith(";base64"):
        raise with_param(
            BadRequest("ref_audio data URLs must be base64 (data:audio/wav;base64,...)"), "ref_audio"
        )
    try:
        return InlineAudio(base64.b64decode(payload, validate=True))
    except (binascii.Error, ValueError):
        raise with_param(BadRequest("ref_audio is not valid base64"), "ref_audio") from None


def parse_speech_request(body: Any, limits: Limits, *, with_input: bool = True) -> SpeechRequest:
    """POST /v1/audio/speech, one batch item (merged over the batch's defaults), or the stream
    socket's `session.config` (`with_input=False`: the text comes later, in fragments)."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    stream_format = _field(body, "stream_format", (str,), "audio")
    if stream_format not in STREAM_FORMATS:
        message = f"stream_format must be one of {', '.join(STREAM_FORMATS)}"
        raise with_param(BadRequest(message), "stream_format")
    language = _field(body, "language", (str,), "ko").strip() or "ko"
    if len(language) > 32:
        raise with_param(BadRequest("language must be a short code such as 'ko'"), "language")
    _field(body, "instructions", (str,))  # accepted (type-checked) and ignored: no style control here
    return SpeechRequest(
        model=_field(body, "model", (str,)),
        input=_text(body, limits) if with_input else "",
        voice=_voice(body),
        response_format=_field(body, "response_format", (str,)),
        speed=_speed(body),
        stream_format=stream_format,
        language=language,
        ref_audio=parse_ref_audio(_field(body, "ref_audio", (str,))),
        ref_text=_field(body, "ref_text", (str,)),
        seed=_field(body, "seed", (int,)),
    )
