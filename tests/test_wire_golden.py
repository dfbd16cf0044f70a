"""The wire model against its golden files: which request bodies are accepted (and what they mean), which
are refused (and with which error), and the exact fields of every event and message.

Recorded from the worker before the wire model moved to msgspec Structs (see tests/golden_support.py).
A refusal records its error name (and OpenAI's `param`); the message too where it is a sentence of ours
that the typed model keeps, not a type or shape complaint, whose wording now comes from the validator.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import msgspec

from npu_worker import protocol as p
from npu_worker import ws_messages as w
from npu_worker.jobs.model import LogEntry
from npu_worker.openai_compat import messages as m
from npu_worker.openai_compat.bodies import OpenAIError
from npu_worker.openai_compat.errors import openai_error
from npu_worker.openai_compat.request import InlineAudio, parse_speech_request
from tests.golden_support import canonical, check

LIMITS = p.Limits(max_text_chars=10, max_sections=3)
BIG = "1" * 5000
DEEP = "[" * 100_000

# (body as sent, keep the message): bodies with a mistake that a sentence of ours explains keep it.
SYNTH = [
    ('{"text": "hi", "output_path": "/tmp/a.wav"}', False),
    (
        '{"text": "hi", "output_path": "/tmp/a.wav", "lang": "en", "speed_factor": 1.5,'
        ' "ref_wav": "/tmp/r.wav", "ref_text": "hello", "seed": 7}',
        False,
    ),
    (
        '{"text": "hi", "output_path": "/tmp/a.wav", "lang": null, "speed_factor": null, "ref_wav": null,'
        ' "ref_text": null, "seed": null}',
        False,
    ),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 2}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 0.25}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 4.0}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "ref_wav": ""}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "ref_text": ""}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": 0}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": 4294967295}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "lang": " ko"}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "colour": "blue", "nested": {"a": [1, 2.5, null]}}', False),
    ('{"text": "\\ud83d\\ude00", "output_path": "/tmp/a.wav"}', False),
    ('{"text": "x\\u0000y", "output_path": "/tmp/a.wav"}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "stream": "ignored", "audio": 5}', False),
    # refused
    ("[1]", False),
    ('"text"', False),
    ("null", False),
    ("{}", False),
    ('{"output_path": "/tmp/a.wav"}', False),
    ('{"text": null, "output_path": "/tmp/a.wav"}', False),
    ('{"text": 5, "output_path": "/tmp/a.wav"}', False),
    ('{"text": "hi"}', False),
    ('{"text": "hi", "output_path": ""}', False),
    ('{"text": "hi", "output_path": null}', False),
    ('{"text": "hi", "output_path": 5}', False),
    ('{"text": "", "output_path": "/tmp/a.wav"}', True),
    ('{"text": "   ", "output_path": "/tmp/a.wav"}', True),
    ('{"text": "eleven char", "output_path": "/tmp/a.wav"}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 0}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 5}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 0.2}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": "fast"}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": true}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": 1e999}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": NaN}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "speed_factor": ' + BIG + "}", False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "lang": ""}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "lang": "   "}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "lang": 3}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "lang": "' + "k" * 33 + '"}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": -1}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": 4294967296}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": 1.5}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": true}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": "1"}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "seed": ' + BIG + "}", False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "ref_wav": 5}', False),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "ref_text": 5}', False),
    ('{"text": "\\ud800", "output_path": "/tmp/a.wav"}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "junk": "\\udfff"}', True),
    ('{"text": "hi", "output_path": "/tmp/a.wav", "junk": ' + DEEP + "}", True),
    ("{not json", True),
    ("", True),
]

BATCH = [
    ('{"sections": [{"text": "a"}, {"text": "b"}]}', False),
    (
        '{"sections": [{"idx": 4, "text": "a", "output_path": "/tmp/a.wav"}, {"idx": 2, "text": "b",'
        ' "output_path": "/tmp/b.wav"}], "lang": "en", "speed_factor": 0.5, "ref_wav": "v", "ref_text": "t",'
        ' "seed": 3, "stream": false, "audio": false}',
        False,
    ),
    ('{"sections": [{"idx": null, "text": "a"}, {"text": "b", "output_path": null}]}', False),
    ('{"sections": [{"text": ""}, {"text": "   "}, {"text": "far too long a text"}]}', False),
    ('{"sections": [{"text": "a"}], "stream": null, "audio": null}', False),
    ('{"sections": [{"idx": 0, "text": "a", "extra": [1]}], "type": "ignored"}', False),
    # refused
    ("[]", False),
    ("{}", False),
    ('{"sections": null}', False),
    ('{"sections": []}', False),
    ('{"sections": "nope"}', False),
    ('{"sections": {"text": "a"}}', False),
    ('{"sections": [1]}', False),
    ('{"sections": [{"idx": 0}]}', False),
    ('{"sections": [{"text": null}]}', False),
    ('{"sections": [{"text": 5}]}', False),
    ('{"sections": [{"idx": "0", "text": "a"}]}', False),
    ('{"sections": [{"idx": -1, "text": "a"}]}', False),
    ('{"sections": [{"idx": true, "text": "a"}]}', False),
    ('{"sections": [{"idx": 1.0, "text": "a"}]}', False),
    ('{"sections": [{"idx": 0, "text": "a"}, {"idx": 0, "text": "b"}]}', True),
    ('{"sections": [{"text": "a"}, {"idx": 0, "text": "b"}]}', True),
    ('{"sections": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]}', True),
    ('{"sections": [{"text": "a", "output_path": 5}]}', False),
    ('{"sections": [{"text": "a", "output_path": ""}]}', False),  # accepted as no path before walk11
    ('{"sections": [{"text": "a"}], "ref_wav": ""}', False),
    ('{"sections": [{"text": "a"}], "stream": "yes"}', False),
    ('{"sections": [{"text": "a"}], "audio": 1}', False),
    ('{"sections": [{"text": "a"}], "speed_factor": 9}', True),
    ('{"sections": [{"text": "\\ud800"}]}', True),
    ('{"sections": [{"idx": ' + BIG + ', "text": "a"}]}', False),
]

WS = [
    ('{"type": "cancel"}', False),
    ('{"type": "cancel", "text": 5, "sections": "x"}', False),
    ('{"type": "synth", "text": "hi"}', False),
    (
        '{"type": "synth", "text": "hi", "output_path": "/tmp/a.wav", "audio": false, "lang": "en",'
        ' "speed_factor": 2, "seed": 1, "stream": false, "idx": 9}',
        False,
    ),
    ('{"type": "synth", "text": "hi", "output_path": ""}', False),
    ('{"type": "synth_batch", "sections": [{"idx": 0, "text": "a"}], "audio": false}', False),
    # refused
    ("{}", True),
    ('{"type": "dance"}', True),
    ('{"type": 5}', True),
    ('{"type": null}', True),
    ("[1]", False),
    ('"synth"', False),
    ('{"type": "synth"}', False),
    ('{"type": "synth", "text": null}', False),
    ('{"type": "synth", "text": 5}', False),
    ('{"type": "synth", "text": "hi", "audio": "yes"}', False),
    ('{"type": "synth", "text": "hi", "speed_factor": 0}', True),
    ('{"type": "synth_batch"}', False),
    ('{"type": "synth_batch", "sections": [{"text": "a"}, {"idx": 0, "text": "b"}]}', True),
    ("{not json", True),
    (DEEP, True),
]

SPEECH = [
    ('{"input": "hi"}', False),
    (
        '{"model": "tts-1", "input": "hi", "voice": "alloy", "response_format": "wav", "speed": 1.5,'
        ' "stream_format": "sse", "language": "en", "instructions": "calm", "ref_audio": "/tmp/r.wav",'
        ' "ref_text": "hello", "seed": 5}',
        False,
    ),
    ('{"input": "hi", "voice": {"id": "v1"}}', False),
    ('{"input": "hi", "voice": {"id": "v1", "name": "ignored"}}', False),
    ('{"input": "hi", "voice": "  v1 "}', False),
    ('{"input": "hi", "language": ""}', False),
    ('{"input": "hi", "language": "  en "}', False),
    ('{"input": "hi", "language": "   "}', False),
    (
        '{"input": "hi", "model": null, "response_format": null, "speed": null, "stream_format": null,'
        ' "language": null, "instructions": null, "ref_audio": null, "ref_text": null, "seed": null}',
        False,
    ),
    ('{"input": "hi", "speed": 1}', False),
    ('{"input": "hi", "speed": 4}', False),
    ('{"input": "hi", "ref_audio": "data:audio/wav;base64,UklGRg=="}', False),
    ('{"input": "hi", "ref_audio": ""}', False),
    ('{"input": "hi", "ref_audio": "   "}', False),
    ('{"input": "hi", "seed": -1}', False),
    ('{"input": "hi", "seed": 99999999999}', False),
    ('{"input": "hi", "ref_audio": "data:audio/wav;base64,' + "A" * 6000 + '"}', False),
    # refused
    ("[1]", False),
    ("{}", False),
    ('{"input": null}', False),
    ('{"input": 5}', False),
    ('{"input": ""}', True),
    ('{"input": "  \\n"}', True),
    ('{"input": "eleven char"}', True),
    ('{"input": "hi", "voice": 7}', False),
    ('{"input": "hi", "voice": ""}', False),
    ('{"input": "hi", "voice": "   "}', False),
    ('{"input": "hi", "voice": null}', False),
    ('{"input": "hi", "voice": {}}', False),
    ('{"input": "hi", "voice": {"id": 5}}', False),
    ('{"input": "hi", "voice": {"id": " "}}', False),
    ('{"input": "hi", "voice": ["a"]}', False),
    ('{"input": "hi", "speed": 5.0}', True),
    ('{"input": "hi", "speed": 0.1}', True),
    ('{"input": "hi", "speed": "fast"}', False),
    ('{"input": "hi", "speed": true}', False),
    ('{"input": "hi", "speed": 1e999}', False),
    ('{"input": "hi", "stream_format": "video"}', False),
    ('{"input": "hi", "stream_format": 5}', False),
    ('{"input": "hi", "language": 3}', False),
    ('{"input": "hi", "language": "' + "k" * 33 + '"}', False),
    ('{"input": "hi", "model": 5}', False),
    ('{"input": "hi", "model": "' + "m" * 4097 + '"}', False),
    ('{"input": "hi", "response_format": 5}', False),
    ('{"input": "hi", "instructions": 5}', False),
    ('{"input": "hi", "instructions": "' + "i" * 4097 + '"}', False),
    ('{"input": "hi", "ref_text": "' + "t" * 4097 + '"}', False),
    ('{"input": "hi", "ref_text": 5}', False),
    ('{"input": "hi", "ref_audio": 5}', False),
    ('{"input": "hi", "ref_audio": "data:audio/wav;base64,@@@"}', True),
    ('{"input": "hi", "ref_audio": "data:audio/wav,plain"}', True),
    ('{"input": "hi", "seed": "1"}', False),
    ('{"input": "hi", "seed": true}', False),
    ('{"input": "hi", "seed": 1.5}', False),
    ('{"input": "\\ud800"}', True),
]

SPEECH_CONFIG = [
    ("{}", False),
    ('{"type": "session.config", "voice": "v", "speed": 2, "input": 5, "stream_audio": false}', False),
    ('{"response_format": "pcm", "language": "en"}', False),
    ('{"speed": 9}', True),
    ('{"voice": 7}', False),
]


def shape(value: Any) -> Any:
    """A parsed request as plain data: field names and values, whatever class holds them."""
    if isinstance(value, InlineAudio):
        return {"inline_audio_bytes": len(value.data)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"class": type(value).__name__} | {
            f.name: shape(getattr(value, f.name)) for f in dataclasses.fields(value)
        }
    if isinstance(value, msgspec.Struct):
        return {"class": type(value).__name__} | {
            name: shape(getattr(value, name)) for name in value.__struct_fields__
        }
    if isinstance(value, tuple | list):
        return [shape(item) for item in value]
    return value


def outcome(parse: Any, body: str, keep_message: bool, openai: bool = False) -> dict[str, Any]:
    try:
        parsed = parse(body)
    except p.WorkerError as error:
        refused: dict[str, Any] = {"refused": error.name}
        if openai:
            refused["param"] = openai_error(error)[0].param
        if keep_message:
            refused["message"] = error.message
        return refused
    return {"accepted": shape(parsed)}


def run(cases: list[tuple[str, bool]], parse: Any, openai: bool = False) -> list[dict[str, Any]]:
    return [
        {"body": body if len(body) < 300 else f"{body[:120]}...({len(body)} characters)"}
        | outcome(parse, body, keep, openai)
        for body, keep in cases
    ]


# The request surfaces, as the views call them.


def parse_synth(body: str) -> Any:
    return p.parse_synth_request(body.encode(), LIMITS)


def parse_batch(body: str) -> Any:
    return p.parse_batch_request(body.encode(), LIMITS)


def parse_ws(body: str) -> Any:
    return w.parse_ws_message(body, LIMITS)


def parse_speech(body: str) -> Any:
    return parse_speech_request(body.encode(), LIMITS)


def parse_speech_config(body: str) -> Any:
    return parse_speech_request(body, LIMITS, with_input=False)


def test_synth_requests():
    check("requests_synth", run(SYNTH, parse_synth))


def test_batch_requests():
    check("requests_batch", run(BATCH, parse_batch))


def test_websocket_messages():
    check("requests_ws", run(WS, parse_ws))


def test_speech_requests():
    check("requests_speech", run(SPEECH, parse_speech, openai=True))


def test_speech_session_config():
    check("requests_speech_config", run(SPEECH_CONFIG, parse_speech_config, openai=True))


# Events and messages, as the views put them on the wire.

EVENTS = [
    p.Start(39, "zipvoice-onnx", "qnn", "abc123", 24000),
    p.Start(1, "espeak-ng", "cpu", "abc123"),
    p.Progress(0, "synth"),
    p.Progress(0, "ok", "/tmp/s00.wav", 4.32, 1.8, True),
    p.Progress(3, "ok", "/tmp/s03.wav", 1.0, 0.5, False),
    p.Progress(2, "ok", None, 0.0, 0.0),
    p.SectionError(7, "TextTooLong: too long"),
    p.SectionError(None, "Busy: one at a time"),
    p.Done(39, 38, 1, 78.5),
    p.Done(3, 1, 0, 2.0, cancelled=True),
    p.Heartbeat(12.0),
    p.Heartbeat(),
    p.AudioStart(0, 24000),
    p.AudioEnd(0, 48000, 5),
    p.FirstAudio(0, 123.4),
    p.Progress(1, "ok", "/tmp/한국어 파일.wav", 1.5, 0.25),
]

MESSAGES = [
    m.SpeechAudioDelta("AAAA"),
    m.SpeechAudioDone("pcm", 24000, 1.2, 0.3, {"input_tokens": 5, "output_tokens": 0, "total_tokens": 0}),
    m.SessionConfigured(24000),
    m.SessionConfigured(24000, format="wav"),
    m.SentenceStart(0, 1, "두 번째 문장.", 24000),
    m.SentenceDone(0, 1, 4800, 3, 24000),
    m.SentenceDone(0, 1, 4800, 3, 24000, error=True),
    m.StreamFirstAudio(0, 0, 12.5, 140.0),
    m.SessionDone(2, 3),
    m.ErrorMessage("no voice named 'x'", "UnknownVoice", "voice", utterance_index=1),
    m.ErrorMessage("bad", "BadRequest", None, utterance_index=0, sentence_index=2),
    m.ErrorMessage("unknown message type", "UnknownMessage", None),
]


def wire_event(event: p.Event) -> Any:
    return canonical(event.encode())


def wire_entry(entry: LogEntry) -> Any:
    return canonical(entry.line)


def wire_message(message: m.Message) -> Any:
    return canonical(message.encode())


def test_events():
    check("events", [wire_event(event) for event in EVENTS])


def test_log_entries():
    check("log_entries", [wire_entry(LogEntry(seq, event)) for seq, event in enumerate(EVENTS, 1)])


def test_openai_messages():
    check("openai_messages", [wire_message(message) for message in MESSAGES])


def openai_body(error: BaseException) -> Any:
    return msgspec.to_builtins(OpenAIError(openai_error(error)[0]))


def test_error_bodies():
    bodies = [
        p.error_body(p.TextTooLong("3000 > 2000")),
        p.error_body(p.ModelLoadError("fm_decoder.onnx missing", fallback="cpu")),
        p.error_body(RuntimeError("boom"), "Traceback (most recent call last): ..."),
        openai_body(p.BadRequest("speed must be between 0.25 and 4.0, got 5.0")),
        openai_body(p.JobNotFound("no job x")),
        openai_body(p.QueueFull("full")),
        openai_body(p.EngineError("crashed")),
        openai_body(RuntimeError("boom")),
    ]
    check("error_bodies", [canonical(json.dumps(body, ensure_ascii=False)) for body in bodies])
