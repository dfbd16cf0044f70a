"""The speech request of the OpenAI API (and the fields vLLM-Omni adds), validated at the edge.

The body decodes into a msgspec Struct (types, ranges and lengths in one pass; a mistake is a
BadRequest whose `param` names the field); what depends on the configuration (the input's length) or
on the value (a `data:` URL, a padded language code) is checked after. Pure code.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from .. import wire
from ..duplicate_keys import READ_AS
from ..protocol import (
    DEFAULT_LANG,
    DEFAULT_SPEED,
    BadRequest,
    EmptyText,
    Limits,
    RefText,
    Seed,
    Speed,
    TextTooLong,
    WorkerError,
)
from .errors import with_param

DEFAULT_FORMAT = "mp3"  # OpenAI's default; `speech.py` falls back to wav where mp3 cannot be encoded
DEFAULT_VOICE = "default"
MAX_FIELD_CHARS = 4096
MAX_LANGUAGE_CHARS = 32

Short = Annotated[str, Meta(max_length=MAX_FIELD_CHARS)]
VoiceName = Annotated[str, Meta(pattern=r"\S", description="a stored voice, `default`, or an engine voice")]


@dataclass(frozen=True)
class InlineAudio:
    """A `data:` URL's decoded bytes (checked by decoding them later, off the event loop)."""

    data: bytes


@dataclass(frozen=True)
class DecodedAudio:
    """Inline audio `data` and its decoded wav (`upload_wav`): a batch's default, decoded once for the
    items that take it with a transcript of their own (each decoded it again, up to 64 times)."""

    data: bytes
    wav: bytes


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


class VoiceRef(msgspec.Struct):
    """`{"id": name}`, as newer SDKs send a voice."""

    id: VoiceName


class SpeechDefaults(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The fields a batch gives as defaults for its items (null stands for the default)."""

    model: Annotated[Short | None, Meta(description="one of GET /v1/models")] = None
    voice: VoiceName | VoiceRef | None = DEFAULT_VOICE
    response_format: Annotated[
        Short | None,
        Meta(description="wav, pcm, flac, mp3 or opus; default mp3 (wav where mp3 cannot be made)"),
    ] = None
    speed: Speed | None = DEFAULT_SPEED
    language: Annotated[Short | None, Meta(description="a short code such as 'ko' (32 characters)")] = (
        DEFAULT_LANG
    )
    ref_audio: Annotated[
        str | None, Meta(description="a path under the allowed roots, or a data:audio/...;base64, URL")
    ] = None
    ref_text: RefText | None = None
    seed: Seed | None = None

    def voice_name(self) -> str:
        """The voice asked for; null is the default voice, as every field's null is its default."""
        if isinstance(self.voice, VoiceRef):
            return self.voice.id.strip()
        return (self.voice or DEFAULT_VOICE).strip()


class SpeechOptions(SpeechDefaults, kw_only=True):
    """Every field of a speech request but its text (the stream socket's `session.config`)."""

    stream_format: Literal["audio", "sse"] | None = "audio"
    instructions: Annotated[Short | None, Meta(description="accepted and ignored")] = None

    def request(self, text: str = "") -> SpeechRequest:
        """The request these fields make, for `text`; BadRequest (with `param`) for what the types
        cannot say."""
        voice = self.voice_name()
        language = (self.language or DEFAULT_LANG).strip() or DEFAULT_LANG
        if len(language) > MAX_LANGUAGE_CHARS:
            raise with_param(BadRequest("language must be a short code such as 'ko'"), "language")
        return SpeechRequest(
            model=self.model,
            input=text,
            voice=voice,
            response_format=self.response_format,
            speed=self.speed if self.speed is not None else DEFAULT_SPEED,
            stream_format=self.stream_format or "audio",
            language=language,
            ref_audio=parse_ref_audio(self.ref_audio),
            ref_text=self.ref_text,
            seed=self.seed,
        )


class SpeechBody(SpeechOptions, kw_only=True):
    """POST /v1/audio/speech (and one item of a batch)."""

    input: Annotated[str, Meta(description="the text, 1 to --max-text-chars characters")]


class SpeechBatchBody(SpeechDefaults, kw_only=True):
    """POST /v1/audio/speech/batch: `items`, each a speech request; the fields here are their defaults."""

    items: Annotated[
        list[Any],
        Meta(
            min_length=1,
            extra_json_schema={"items": {"$ref": "#/components/schemas/SpeechBody"}},
            extra={READ_AS: SpeechBody},  # its objects checked for a key given twice as a body's are
        ),
    ]

    def merged_items(self) -> list[Any]:
        """Each item over the defaults given here, an item's null as a field it did not give (an item
        that is not an object stays as it is, to fail on its own). An item naming its own `voice` (and
        no `ref_audio`) takes neither default `ref_audio` nor `ref_text`: the default reference won over
        it, so the item spoke in another voice than it asked for, or failed with the default's error."""
        defaults = msgspec.to_builtins(self)  # the fields given, with a value other than the default
        defaults.pop("items")
        others = {k: v for k, v in defaults.items() if k not in ("ref_audio", "ref_text")}
        merged = []
        for item in self.items:
            if not isinstance(item, dict):
                merged.append(item)
                continue
            own = {k: v for k, v in item.items() if v is not None}
            merged.append({**(others if "voice" in own and "ref_audio" not in own else defaults), **own})
        return merged

    def defaults_request(self) -> SpeechRequest:
        """The request these defaults make alone: what an item giving none of its own speaks with."""
        fields = {name: getattr(self, name) for name in SpeechDefaults.__struct_fields__}
        return SpeechOptions(**fields).request()

    def speaks_as_defaults(self) -> bool:
        """Whether some item takes its voice, reference audio and transcript and its language all from
        the defaults: a reference or language none could use is then one 400, and an inline
        `ref_audio` is decoded once (an audio that fails was decoded again for each item, up to 64)."""
        own = ("voice", "ref_audio", "ref_text", "language")
        return any(
            isinstance(item, dict) and all(item.get(name) is None for name in own) for item in self.items
        )

    def takes_default_audio(self) -> bool:
        """Whether some item speaks with the default inline `ref_audio` (no `voice` or `ref_audio` of its
        own), whatever transcript or language it gives: audio that does not decode is then one 400 (with
        a `language` in each item, each decoded it again, up to 64 times, each its own InvalidAudio)."""
        inline = self.ref_audio is not None and self.ref_audio.startswith("data:")
        return inline and any(
            isinstance(item, dict) and item.get("voice") is None and item.get("ref_audio") is None
            for item in self.items
        )

    def voice_is_used(self) -> bool:
        """Whether some item speaks with the default `voice` given here (one without its own voice
        or reference audio): a name none could use is then one 400, not a failure per item."""
        return not self.ref_audio and any(
            isinstance(item, dict) and item.get("voice") is None and not item.get("ref_audio")
            for item in self.items
        )


def check_input(text: str, limits: Limits) -> str:
    error: WorkerError | None = None
    if not text.strip():
        error = EmptyText("input is empty")
    elif len(text) > limits.max_text_chars:
        error = TextTooLong(f"input has {len(text)} characters, the limit is {limits.max_text_chars}")
    if error is not None:
        raise with_param(error, "input")
    return text


def parse_ref_audio(value: str | None) -> str | InlineAudio | None:
    """A local path (checked against the allowed roots later) or a base64 `data:` URL. An empty one is
    refused, as `ref_wav`'s "" is on the native routes: null asks for the default voice, "" is a mistake."""
    if value is None:
        return None
    if not value.strip():  # (worded as `ref_wav`'s: "" is empty, "   " blank)
        said = (
            f"ref_audio is {'blank' if value else 'empty'}: leave it out or send null for the default voice"
        )
        raise with_param(BadRequest(said), "ref_audio")
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


def parse_speech_request(
    body: bytes | str | Any, limits: Limits, *, with_input: bool = True
) -> SpeechRequest:
    """POST /v1/audio/speech, one batch item (merged over the batch's defaults), or the stream
    socket's `session.config` fields (`with_input=False`: the text comes later, in fragments)."""
    if not with_input:
        options: SpeechOptions = wire.load(body, SpeechOptions)
        return options.request()
    parsed: SpeechBody = wire.load(body, SpeechBody)
    return parsed.request(check_input(parsed.input, limits))
