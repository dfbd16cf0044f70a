"""The codec every body goes through (npu_worker/wire.py): each hostile case Python's parser refused is
still refused with msgspec (those msgspec refuses by itself, and those it would skip in a field the
worker ignores), mistakes name their place, and events are encoded once."""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from npu_worker import protocol as p
from npu_worker import wire
from npu_worker import ws_messages as w
from npu_worker.jobs.model import LogEntry
from npu_worker.openai_compat import messages as m
from npu_worker.openai_compat.request import SpeechBody, parse_speech_request

LIMITS = p.Limits()
GOOD = '{"text": "hi", "output_path": "/tmp/a.wav"'


def synth(extra: str) -> bytes:
    return (GOOD + extra + "}").encode()


def refused(raw: bytes | str, into: Any = p.SynthBody) -> str:
    with pytest.raises(p.BadRequest) as caught:
        wire.decode(raw, into)
    return caught.value.message


# -- hostile input, field by field: read fields and fields the worker ignores alike -------------------


@pytest.mark.parametrize("where", ['"text": "\\ud800"', '"junk": "\\udfff"', '"junk": ["a", "\\ud800b"]'])
def test_a_lone_surrogate_anywhere_is_refused_and_located(where):
    raw = ('{"output_path": "/tmp/a.wav", ' + where + "}").encode()
    assert refused(raw).endswith("holds a lone surrogate (not valid Unicode)")
    assert refused(raw).split(" holds")[0] in ("text", "junk", "junk[1]")


def test_a_lone_surrogate_in_a_key_is_refused_and_pairs_are_fine():
    assert refused(b'{"\\ud800": 1}', Any) == "a key holds a lone surrogate (not valid Unicode)"
    assert wire.decode(b'{"text": "\\ud83d\\ude00"}', Any) == {"text": "\U0001f600"}


@pytest.mark.parametrize("extra", [', "junk": "\xff"', ', "text": "\xed\xa0\x80"'])
def test_bytes_that_are_not_utf8_are_refused_even_in_an_ignored_field(extra):
    raw = GOOD.encode() + extra.encode("latin-1") + b"}"
    assert refused(raw) == "the body is not UTF-8"


def test_a_leading_utf8_byte_order_mark_is_skipped_and_nowhere_else():
    assert wire.decode(b"\xef\xbb\xbf" + synth(""), p.SynthBody).text == "hi"
    assert isinstance(wire.decode("\ufeff" + '{"type": "cancel"}', w.WsMessage), w.WsCancel)  # a text frame
    assert refused(b"\xef\xbb\xbf\xef\xbb\xbf" + synth("")).startswith("invalid JSON")
    assert refused(synth(" \ufeff")).startswith("invalid JSON")  # only a leading one
    with pytest.raises(p.UnknownMessage):
        w.parse_ws_message("\ufeff" + '{"type": "nope"}', LIMITS)


@pytest.mark.parametrize("field", ["seed", "junk"])
def test_an_integer_past_the_conversion_limit_is_refused_even_in_an_ignored_field(field):
    assert refused(synth(f', "{field}": ' + "1" * 4301)) == "invalid JSON: a number has too many digits"


def test_the_limit_is_python_s_and_digits_inside_a_string_are_text():
    assert wire.decode(synth(', "junk": ' + "1" * 4300), p.SynthBody).text == "hi"
    assert wire.decode(synth(', "junk": "' + "1" * 5000 + '"'), p.SynthBody).text == "hi"
    digits = ('{"output_path": "/tmp/a.wav", "text": "' + "1" * 5000 + '"}').encode()  # (text once)
    assert wire.decode(digits, p.SynthBody).text == "1" * 5000


def test_integers_beyond_64_bits_are_refused_where_a_range_is_declared():
    message = refused(synth(', "seed": 18446744073709551616'))
    assert message == "seed must be between 0 and 4294967295, got 18446744073709551616"


@pytest.mark.parametrize("extra", [', "junk": ' + "[" * 5000 + "]" * 5000, ', "junk": ' + '{"a":' * 5000])
def test_nesting_past_the_recursion_limit_is_refused_even_in_an_ignored_field(extra):
    assert refused(synth(extra)) == "invalid JSON: nested too deeply"


def test_a_deep_document_is_a_syntax_error_before_a_type_error():
    assert refused("[" * 100_000, w.WsMessage) == "invalid JSON: nested too deeply"
    assert refused(b"[1, 2", p.SynthBody).startswith("invalid JSON: Expecting ")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_numbers_json_does_not_have_are_refused(number):
    assert refused(synth(f', "junk": {number}')).startswith("invalid JSON: ")
    assert refused(synth(f', "speed_factor": {number}')).startswith("invalid JSON: ")


def test_a_float_out_of_range_is_refused_where_read_and_ignored_elsewhere():
    assert refused(synth(', "speed_factor": 1e999')) == "Number out of range - at `$.speed_factor`"
    assert wire.decode(synth(', "junk": 1e999'), p.SynthBody).text == "hi"


def test_a_key_given_twice_is_refused_not_taken_last():
    """Python's parser, then msgspec, kept the last; a proxy may read the first (contract62)."""
    message = refused(b'{"text": "a", "output_path": "/x", "text": "b"}')
    assert message == 'the key "text" is given twice in one object; give each key once'


ITEM = b'{"a": [1, 2, 3], "b": "xx"}'
PILE = b",".join([ITEM] * 280_000)  # 8 MiB of small objects: the worst to decode


def cpu_seconds(action: Any) -> float:
    """The CPU time `action()` takes (the least of three tries: the machine is shared and noisy)."""
    costs = []
    for _ in range(3):
        started = time.process_time()
        action()
        costs.append(time.process_time() - started)
    return min(costs)


@functools.cache
def decoding_whole() -> float:
    """What one full decode of the 8 MiB pile costs on this machine, as the comparison's unit (measured
    once per run): the refusal used to decode the document again and run Python's parser on it."""
    return cpu_seconds(lambda: msgspec.json.decode(PILE.join([b"[", b"]"])))


@pytest.mark.parametrize(
    "body, message",
    [
        (b'{"sections": [' + PILE + b'], "x": tru}', "invalid JSON: JSON is malformed: invalid character"),
        (b'{"sections": [' + PILE + b"]}", "Object missing required field `text` - at `$.sections[0]`"),
        (
            b'{"junk": [' + PILE + b'], "speed_factor": 9, "sections": [{"text": "a"}]}',
            "speed_factor must be between 0.25 and 4.0, got 9",
        ),
        (
            b'{"junk": [' + PILE + b'], "seed": ' + b"1" * 5000 + b', "sections": []}',
            "Integer value out of range",
        ),
    ],
    ids=["malformed", "wrong-type", "out-of-range", "huge-integer"],
)
def test_refusing_a_large_body_costs_no_full_decode(body, message):
    """Bodies are decoded on the event loop: a refusal of 8 MiB of small objects took 0.4 to 1.2 s of
    CPU (the document decoded again, then Python's parser for the wording), holding /health and every
    stream that long; now it costs about what accepting it does."""
    assert len(body) <= 8 * 1024 * 1024
    assert refused(body, p.BatchBody).startswith(message)
    # The refusal's cost next to one full decode of the same bytes, measured in the same run: before,
    # it was several full decodes plus Python's parser; now a syntax scan, well under one.
    assert cpu_seconds(lambda: refused(body, p.BatchBody)) < decoding_whole()


@pytest.mark.parametrize("kind", ["wrong-type", "unknown-type"])
def test_refusing_a_large_socket_message_costs_no_full_decode(kind):
    """A refused /ws message is decoded again to name its `type`: only its top level now."""
    body = b'{"type": "synth", "junk": [' + PILE + b'], "text": 5}'
    if kind == "unknown-type":
        body = b'{"type": "sing", "junk": [' + PILE + b"]}"
    with pytest.raises((p.BadRequest, p.UnknownMessage)):
        w.parse_ws_message(body, LIMITS)

    def refuse() -> None:
        with pytest.raises((p.BadRequest, p.UnknownMessage)):
            w.parse_ws_message(body, LIMITS)

    assert cpu_seconds(refuse) < decoding_whole()


def test_a_large_body_with_a_huge_integer_in_an_ignored_field_is_accepted():
    """Past MAX_WORDED_BYTES, Python's parser no longer confirms a digit run: one in a field the worker
    ignores is skipped like the rest of that field (where it reads one, msgspec refuses it, above)."""
    body = (
        b'{"junk": ['
        + b",".join([ITEM] * 2500)
        + b'], "n": '
        + b"1" * 5000
        + b', "sections": [{"text": "a"}]}'
    )
    assert len(body) > 64 * 1024  # refusals.MAX_WORDED_BYTES
    assert len(p.parse_batch_request(body, LIMITS).sections) == 1


# -- mistakes name their place ---------------------------------------------------------------------


def test_a_wrong_type_names_the_path():
    raw = b'{"sections": [{"text": 5}]}'
    with pytest.raises(p.BadRequest) as caught:
        p.parse_batch_request(raw, LIMITS)
    assert str(caught.value) == "BadRequest: Expected `str`, got `int` - at `$.sections[0].text`"
    assert caught.value.param == "sections"


def test_a_missing_field_is_its_param_and_a_root_mistake_has_none():
    with pytest.raises(p.BadRequest) as caught:
        parse_speech_request(b'{"voice": "default"}', LIMITS)
    assert caught.value.message == "Object missing required field `input`" and caught.value.param == "input"
    with pytest.raises(p.BadRequest) as caught:
        parse_speech_request(b"[1]", LIMITS)
    assert caught.value.param is None


def test_a_two_sided_range_says_the_range_and_the_value_sent():
    with pytest.raises(p.BadRequest) as caught:
        parse_speech_request(b'{"input": "hi", "speed": 9}', LIMITS)
    assert caught.value.message == "speed must be between 0.25 and 4.0, got 9"
    with pytest.raises(p.BadRequest) as caught:
        p.parse_batch_request(b'{"sections": [{"idx": -1, "text": "a"}]}', LIMITS)
    assert caught.value.message == "Expected `int` >= 0 - at `$.sections[0].idx`"
    with pytest.raises(p.BadRequest) as caught:
        p.parse_batch_request(b'{"sections": [{"idx": 2147483648, "text": "a"}]}', LIMITS)
    assert caught.value.message == "Expected `int` <= 2147483647 - at `$.sections[0].idx`"
    largest = p.parse_batch_request(b'{"sections": [{"idx": 2147483647, "text": "a"}]}', LIMITS)
    assert largest.sections[0].idx == p.MAX_INDEX == 2**31 - 1


def test_an_already_decoded_body_is_checked_the_same_way():
    with pytest.raises(p.BadRequest) as caught:
        wire.convert({"input": "hi", "speed": 0.1}, SpeechBody)
    assert caught.value.message == "speed must be between 0.25 and 4.0, got 0.1"
    assert caught.value.param == "speed"


# -- encoding --------------------------------------------------------------------------------------


EVENTS = [
    p.Start(2, "espeak-ng", "cpu", "abc", 24000),
    p.Progress(0, "ok", "/tmp/한국어.wav", 4.32, 1.8, True),
    p.SectionError(None, "Busy: one, at: a time"),
    p.Done(2, 1, 1, 78.5, cancelled=True),
    p.Heartbeat(),
    p.AudioStart(0, 24000),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.wire_name)
def test_events_are_byte_for_byte_what_json_dumps_wrote(event):
    """Whitespace is not part of the contract, but clients may match on it: nothing changes."""
    assert event.encode() == json.dumps(event.to_dict(), ensure_ascii=False).encode()
    entry = LogEntry(7, event)
    assert entry.line == json.dumps(entry.to_dict(), ensure_ascii=False).encode()


def test_a_log_entry_is_made_without_a_python_call_and_stays_what_it_was():
    """A journal append makes one on the engine lane for every event: a dataclass's `__init__` was a
    Python call and two `object.__setattr__` each (benchmarks/SERVER_OVERHEAD.md, stop 59)."""
    event = p.Progress(0, "synth")
    called: list[str] = []

    def record(frame: Any, what: str, arg: Any) -> None:
        if what == "call" or (what == "c_call" and arg is not sys.setprofile):
            called.append(frame.f_code.co_name if what == "call" else arg.__qualname__)

    sys.setprofile(record)
    try:
        entry = LogEntry(2, event)
    finally:
        sys.setprofile(None)
    assert called == [], called
    assert (entry.seq, entry.event) == (2, event) and entry == LogEntry(2, event) != LogEntry(3, event)
    with pytest.raises(AttributeError):
        entry.seq = 5  # type: ignore[misc]
    assert entry.line is entry.line  # encoded once
    assert entry.line == b'{"event": "progress", "idx": 0, "status": "synth", "seq": 2}'


def test_a_log_entry_s_line_is_encoded_at_its_first_read_without_a_descriptor_or_a_lock():
    """The loop reads each `/ws` preview entry's `line` once (four a preview): `functools.cached_property`
    ran its own `__get__` and took an `RLock` each time (benchmarks/SERVER_OVERHEAD.md, stop 60)."""
    entry = LogEntry(4, p.Progress(0, "synth"))
    assert "line" not in entry.__dict__  # nothing encoded at the entry's making
    python_calls: list[str] = []
    c_calls: list[str] = []

    def record(frame: Any, what: str, arg: Any) -> None:
        if what == "call":
            python_calls.append(frame.f_code.co_name)
        elif what == "c_call" and arg is not sys.setprofile:
            c_calls.append(arg.__qualname__)

    sys.setprofile(record)
    try:
        first = entry.line
        again = entry.line
    finally:
        sys.setprofile(None)
    assert python_calls == ["__getattr__", "encode_entry"], python_calls
    assert not [name for name in c_calls if "RLock" in name or "lock" in name], c_calls
    assert first is again is entry.__dict__["line"]
    assert first == b'{"event": "progress", "idx": 0, "status": "synth", "seq": 4}'
    with pytest.raises(AttributeError, match="no attribute 'lines'"):
        entry.lines  # noqa: B018 (any other name is still an AttributeError)


def test_a_log_entry_is_encoded_once_with_seq_last():
    entry = LogEntry(3, p.Progress(0, "ok", "/tmp/s.wav", 1.0, 0.5))
    assert entry.line is entry.line  # cached: the log file, NDJSON and /ws share these bytes
    assert list(json.loads(entry.line)) == [
        "event",
        "idx",
        "status",
        "wav_path",
        "duration_sec",
        "elapsed_sec",
        "seq",
    ]
    assert json.loads(entry.line) == entry.to_dict()


def event_and_message_classes() -> list[type[msgspec.Struct]]:
    return [*p.EVENT_CLASSES.values(), *m.SOCKET_MESSAGES, *m.SSE_EVENTS]


@pytest.mark.parametrize("kind", event_and_message_classes(), ids=lambda c: c.__name__)
def test_none_defaults_are_left_off_and_other_defaults_are_sent(kind):
    """`omit_defaults` leaves off every field equal to its default: right only where all defaults are
    None (a None-valued optional field was never sent); a class with another default sends it."""
    defaults = [f.default for f in msgspec.structs.fields(kind) if f.default is not msgspec.NODEFAULT]
    omits = kind.__struct_config__.omit_defaults
    assert omits == (bool(defaults) and all(d is None for d in defaults)), kind
    assert not (any(d is None for d in defaults) and any(d is not None for d in defaults)), kind


def test_old_log_lines_with_spaces_still_decode():
    old = json.dumps(
        {
            "event": "done",
            "total": 2,
            "ok_count": 2,
            "fail_count": 0,
            "elapsed_total_sec": 1.5,
            "cancelled": False,
            "seq": 9,
        }
    )
    assert p.decode_event(old) == p.Done(2, 2, 0, 1.5)
    with pytest.raises(msgspec.MsgspecError):
        p.decode_event('{"event": "mystery"}')


async def test_one_encoding_serves_the_log_file_every_ndjson_listener_and_the_socket(worker, settings):
    client = await worker()
    response = await client.post("/synth_batch", json={"sections": [{"text": "하나."}, {"text": "둘."}]})
    lines = (await response.read()).splitlines()
    job_id = json.loads(lines[0])["job_id"]
    replayed = (await (await client.get(f"/jobs/{job_id}/events")).read()).splitlines()
    stored = (Path(settings.state_dir) / "jobs" / job_id / "events.ndjson").read_bytes().splitlines()
    assert lines == replayed == stored and len(lines) == 6
    async with client.ws_connect("/ws") as ws:
        await ws.send_str(json.dumps({"type": "synth", "text": "셋.", "audio": False}))
        frames = [(await ws.receive(timeout=10)).data for _ in range(4)]
    assert [json.loads(frame)["event"] for frame in frames] == ["start", "progress", "progress", "done"]
    assert all(frame == json.dumps(json.loads(frame), ensure_ascii=False) for frame in frames)


@pytest.mark.parametrize("lone", ["\\ud800", "\\ud800x", "\\\\\\ud800"])
def test_a_lone_surrogate_in_a_body_too_large_to_word_is_still_named(lone):
    """Over 64 KiB (a speech request with inline ref_audio always is) the words are msgspec's, which for
    a high half without its pair are "Input data was truncated": a ref_text of "\\ud800" was refused so."""
    padding = "A" * (100 * 1024)
    raw = f'{{"input": "hi", "ref_audio": "data:audio/wav;base64,{padding}", "ref_text": "{lone}"}}'
    assert refused(raw.encode(), SpeechBody) == "the body holds a lone surrogate (not valid Unicode)"


@pytest.mark.parametrize("text", ["\\\\ud800", "\\ud83d\\ude00", "\\\\\\\\udc00"])
def test_a_large_body_with_escaped_backslashes_or_pairs_is_no_lone_surrogate(text):
    padding = "A" * (100 * 1024)
    raw = f'{{"input": "hi", "ref_text": "{text}", "junk": "{padding}"'  # cut short: no closing brace
    assert refused(raw.encode(), SpeechBody) == "invalid JSON: Input data was truncated"
    assert wire.decode((raw + "}").encode(), Any)["ref_text"] in ("\\ud800", "\U0001f600", "\\\\udc00")
