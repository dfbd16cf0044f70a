"""The server's messages on the OpenAI surface: SSE events and the stream socket's text frames.

One dataclass per wire `type`, with `to_dict` (None-valued optional fields left off), as the v1 events
in `protocol.py` do; the tests round-trip every class. Pure code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ..protocol import wire_fields


@dataclass(frozen=True)
class Message:
    wire_type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.wire_type, **wire_fields(self)}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> Message:
        message_class = MESSAGE_CLASSES[body["type"]]
        names = {f.name for f in dataclasses.fields(message_class)}
        return message_class(**{k: v for k, v in body.items() if k in names})


@dataclass(frozen=True)
class SpeechAudioDelta(Message):
    wire_type: ClassVar[str] = "speech.audio.delta"
    audio: str  # base64 of the next bytes in the response format


@dataclass(frozen=True)
class SpeechAudioDone(Message):
    wire_type: ClassVar[str] = "speech.audio.done"
    format: str
    sample_rate: int
    duration_sec: float
    elapsed_sec: float
    usage: dict[str, int]


@dataclass(frozen=True)
class SessionConfigured(Message):
    wire_type: ClassVar[str] = "session.configured"
    sample_rate: int
    format: str = "pcm"


@dataclass(frozen=True)
class AudioStart(Message):
    wire_type: ClassVar[str] = "audio.start"
    utterance_index: int
    sentence_index: int
    sentence_text: str
    sample_rate: int
    format: str = "pcm"
    channels: int = 1


@dataclass(frozen=True)
class AudioDone(Message):
    wire_type: ClassVar[str] = "audio.done"
    utterance_index: int
    sentence_index: int
    total_bytes: int
    chunk_count: int
    sample_rate: int
    error: bool = False


@dataclass(frozen=True)
class FirstAudio(Message):
    """`ttfa_ms` from the fragment that completed the first sentence, `since_first_text_ms` from the
    utterance's first fragment, both to sending the frame that carries the first audible sample."""

    wire_type: ClassVar[str] = "first_audio"
    utterance_index: int
    sentence_index: int
    ttfa_ms: float
    since_first_text_ms: float


@dataclass(frozen=True)
class SessionDone(Message):
    wire_type: ClassVar[str] = "session.done"
    utterance_index: int
    total_sentences: int


@dataclass(frozen=True)
class ErrorMessage(Message):
    """A stream socket's `error` (the session goes on); where it happened, when it concerns a sentence."""

    wire_type: ClassVar[str] = "error"
    message: str
    code: str
    param: str | None  # always sent (null when no field is at fault), as in OpenAI's error object
    utterance_index: int | None = None
    sentence_index: int | None = None


MESSAGE_CLASSES: dict[str, type[Message]] = {
    c.wire_type: c
    for c in (
        SpeechAudioDelta,
        SpeechAudioDone,
        SessionConfigured,
        AudioStart,
        AudioDone,
        FirstAudio,
        SessionDone,
        ErrorMessage,
    )
}
