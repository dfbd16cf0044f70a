"""The contract's pure parts: every event round-trips, requests validate at the edge."""

from __future__ import annotations

import pytest

from npu_worker import protocol as p
from npu_worker import ws_messages as w

EXAMPLES = [
    p.Start(39, "zipvoice-onnx", "qnn", "abc123", 24000),
    p.Progress(0, "synth"),
    p.Progress(0, "ok", "/tmp/s00.wav", 4.32, 1.8, True),
    p.SectionError(7, "TextTooLong: too long"),
    p.Done(39, 38, 1, 78.5),
    p.Done(3, 1, 0, 2.0, cancelled=True),
    p.Heartbeat(12.0),
    p.AudioStart(0, 24000),
    p.AudioEnd(0, 48000, 5),
    p.FirstAudio(0, 123.4),
]


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_its_wire_dict(event):
    wire = event.to_dict()
    assert wire["event"] == event.wire_name
    assert p.Event.from_dict(wire) == event


def test_fixed_field_names_of_the_ndjson_events():
    assert p.Progress(0, "ok", "/x.wav", 1.0, 0.5).to_dict() == {
        "event": "progress",
        "idx": 0,
        "status": "ok",
        "wav_path": "/x.wav",
        "duration_sec": 1.0,
        "elapsed_sec": 0.5,
    }
    assert p.SectionError(7, "X: y").to_dict() == {
        "event": "error",
        "idx": 7,
        "error": "X: y",
        "status": "fail",
    }
    assert set(p.Done(1, 1, 0, 1.0).to_dict()) >= {
        "event",
        "total",
        "ok_count",
        "fail_count",
        "elapsed_total_sec",
    }


def test_unknown_event_kind_is_refused():
    with pytest.raises(p.BadRequest):
        p.Event.from_dict({"event": "mystery"})


def test_error_strings_start_with_a_stable_name():
    assert str(p.TextTooLong("3000 > 2000")) == "TextTooLong: 3000 > 2000"
    body = p.error_body(p.ModelLoadError("fm_decoder.onnx missing", fallback="cpu"))
    assert body == {
        "status": "fail",
        "error": "ModelLoadError: fm_decoder.onnx missing",
        "traceback": None,
        "fallback": "cpu",
    }


def test_batch_defaults_and_section_indices():
    request = p.parse_batch_request({"sections": [{"text": "a"}, {"text": "b"}]}, p.Limits())
    assert [s.idx for s in request.sections] == [0, 1]
    assert request.stream is True and request.params.lang == "ko" and request.params.speed_factor == 1.0


def test_unknown_request_fields_are_ignored():
    request = p.parse_synth_request({"text": "a", "output_path": "/tmp/a.wav", "colour": "blue"}, p.Limits())
    assert request.text == "a"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"type": "cancel"}, p.CancelRequest),
        ({"type": "synth", "text": "hi"}, p.BatchRequest),
        ({"type": "synth_batch", "sections": [{"idx": 0, "text": "a"}]}, p.BatchRequest),
    ],
)
def test_websocket_messages_parse_to_requests(message, expected):
    assert isinstance(w.parse_ws_message(message, p.Limits()), expected)


def test_unknown_websocket_message_type_is_named():
    with pytest.raises(p.UnknownMessage):
        w.parse_ws_message({"type": "dance"}, p.Limits())
