"""The messages of the OpenAI surface: SSE events, and the stream socket's frames both ways.

One msgspec Struct per wire `type` (`"type": name` first); a client's frame read as its message by
`decode_message`. A field whose default is None is left off the wire while None (`omit_defaults` on
exactly the classes whose optional fields default to None), as the v1 events in `protocol.py` do; the
tests round-trip every class. Pure code.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from .. import wire
from ..protocol import BadRequest, UnknownMessage
from ..ws_messages import unknown_type
from .bodies import ErrorDetail
from .request import SpeechOptions


class Message(msgspec.Struct, tag_field="type"):
    """A server→client message; `wire_type` is its `type` value."""

    @property
    def wire_type(self) -> str:
        return str(self.__struct_config__.tag)

    def to_dict(self) -> dict[str, Any]:
        return msgspec.to_builtins(self)

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> Message:
        """`Message.from_dict` picks the class by `type` (an `error` is the socket's); a subclass's
        reads its own."""
        target = MESSAGE_CLASSES[body["type"]] if cls is Message else cls
        return wire.convert(body, target)

    def encode(self) -> bytes:
        return wire.encode(self)


# -- SSE events of POST /v1/audio/speech (stream_format: sse) --------------------------------------


class SpeechAudioDelta(Message, tag="speech.audio.delta"):
    audio: Annotated[str, Meta(description="base64 of the next bytes in the response format")]


class SpeechAudioDone(Message, tag="speech.audio.done"):
    format: str
    sample_rate: int
    duration_sec: float
    elapsed_sec: float
    usage: dict[str, int]


class SpeechError(Message, tag="error"):
    """A failure after the first SSE event; the stream then ends."""

    error: ErrorDetail


SseEvent = SpeechAudioDelta | SpeechAudioDone | SpeechError

# -- the stream socket, server → client ------------------------------------------------------------


class SessionConfigured(Message, tag="session.configured"):
    sample_rate: int
    format: str = "pcm"


class SentenceStart(Message, tag="audio.start"):
    utterance_index: int
    sentence_index: int
    sentence_text: str
    sample_rate: int
    format: str = "pcm"
    channels: int = 1


class SentenceDone(Message, tag="audio.done"):
    utterance_index: int
    sentence_index: int
    total_bytes: int
    chunk_count: int
    sample_rate: int
    error: bool = False


class StreamFirstAudio(Message, tag="first_audio"):
    """`ttfa_ms` from the fragment that completed the first sentence, `since_first_text_ms` from the
    utterance's first fragment, both to sending the frame that carries the first audible sample."""

    utterance_index: int
    sentence_index: int
    ttfa_ms: float
    since_first_text_ms: float


class SessionDone(Message, tag="session.done"):
    utterance_index: int
    total_sentences: int


class ErrorMessage(Message, tag="error", omit_defaults=True):
    """A stream socket's `error` (the session goes on); where it happened, when it concerns a sentence."""

    message: str
    code: str
    param: Annotated[str | None, Meta(description="always sent (null when no field is at fault)")]
    utterance_index: int | None = None
    sentence_index: int | None = None


SocketMessage = (
    SessionConfigured | SentenceStart | SentenceDone | StreamFirstAudio | SessionDone | ErrorMessage
)
SOCKET_MESSAGES: tuple[type[Message], ...] = (
    SessionConfigured,
    SentenceStart,
    SentenceDone,
    StreamFirstAudio,
    SessionDone,
    ErrorMessage,
)
SSE_EVENTS: tuple[type[Message], ...] = (SpeechAudioDelta, SpeechAudioDone, SpeechError)
_BY_TYPE: tuple[type[Message], ...] = (SpeechAudioDelta, SpeechAudioDone, *SOCKET_MESSAGES)
MESSAGE_CLASSES = {str(c.__struct_config__.tag): c for c in _BY_TYPE}  # SSE's `error` is the socket's name

# -- the stream socket, client → server ------------------------------------------------------------


class SessionConfig(SpeechOptions, kw_only=True, tag_field="type", tag="session.config"):
    """The speech request's fields but `input`; they apply to sentences completed after it."""

    stream_audio: Annotated[bool, Meta(description="false: each sentence as one frame")] = True


class InputText(msgspec.Struct, tag_field="type", tag="input.text"):
    """A fragment of the utterance's text (at most --max-text-chars characters)."""

    text: str


class InputDone(msgspec.Struct, tag_field="type", tag="input.done"):
    """The end of the utterance: the rest is spoken, then `session.done`."""


class SessionClose(msgspec.Struct, tag_field="type", tag="session.close"):
    """Finish the open utterance, then the server closes the socket."""


ClientMessage = SessionConfig | InputText | InputDone | SessionClose
CLIENT_TYPES = frozenset(("session.config", "input.text", "input.done", "session.close"))


def decode_message(text: str) -> SessionConfig | InputText | InputDone | SessionClose:
    """A client text frame as its message; a frame that is no object, or of no known `type`, is
    UnknownMessage (a JSON mistake or a bad field of a known one is BadRequest)."""
    try:
        message: SessionConfig | InputText | InputDone | SessionClose = wire.decode(text, ClientMessage)
    except BadRequest:
        found = wire.tag_of(text, "type")
        if found is not None and not found[0]:  # JSON, but no object
            raise UnknownMessage("the message is not a JSON object") from None
        if found is not None and found[1] not in CLIENT_TYPES:  # an object of no known type
            raise UnknownMessage(unknown_type(found[1])) from None
        raise
    return message
