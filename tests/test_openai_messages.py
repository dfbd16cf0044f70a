"""Every message of the OpenAI surface round-trips through its dict (one dataclass per wire type)."""

from __future__ import annotations

import pytest

from npu_worker import wire
from npu_worker.openai_compat.bodies import ErrorDetail
from npu_worker.openai_compat.messages import (
    MESSAGE_CLASSES,
    ClientMessage,
    ErrorMessage,
    InputDone,
    InputText,
    Message,
    SentenceDone,
    SentenceStart,
    SessionConfig,
    SessionConfigured,
    SessionDone,
    SpeechAudioDelta,
    SpeechAudioDone,
    SpeechError,
    StreamFirstAudio,
)

EXAMPLES = [
    SpeechAudioDelta("AAAA"),
    SpeechAudioDone("pcm", 24000, 1.2, 0.3, {"input_tokens": 5, "output_tokens": 0, "total_tokens": 0}),
    SessionConfigured(24000),
    SentenceStart(0, 1, "두 번째 문장.", 24000),
    SentenceDone(0, 1, 4800, 3, 24000, error=True),
    StreamFirstAudio(0, 0, 12.5, 140.0),
    SessionDone(2, 3),
    ErrorMessage("no voice named 'x'", "UnknownVoice", "voice", utterance_index=1),
    ErrorMessage("unknown message type", "UnknownMessage", None),
]


def test_every_message_class_has_an_example():
    assert {type(m) for m in EXAMPLES} == set(MESSAGE_CLASSES.values())


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: f"{m.wire_type}")
def test_message_round_trips_through_its_dict(message):
    body = message.to_dict()
    assert body["type"] == message.wire_type
    assert Message.from_dict(body) == message


def test_an_error_always_carries_param_and_leaves_unknown_places_off():
    body = ErrorMessage("bad", "BadRequest", None).to_dict()
    assert body == {"type": "error", "message": "bad", "code": "BadRequest", "param": None}


def test_the_sse_error_carries_openai_s_error_object():
    error = SpeechError(ErrorDetail("crashed", "server_error", None, "EngineError"))
    body = error.to_dict()
    assert body == {
        "type": "error",
        "error": {"message": "crashed", "type": "server_error", "param": None, "code": "EngineError"},
    }
    assert SpeechError.from_dict(body) == error


def test_client_messages_decode_by_type_and_ignore_unknown_fields():
    config = wire.decode(
        b'{"type": "session.config", "voice": "v", "input": 5, "stream_audio": false}', ClientMessage
    )
    assert isinstance(config, SessionConfig) and config.voice == "v" and config.stream_audio is False
    assert wire.decode(b'{"type": "input.text", "text": "hi"}', ClientMessage) == InputText("hi")
    assert isinstance(wire.decode(b'{"type": "input.done", "x": 1}', ClientMessage), InputDone)
