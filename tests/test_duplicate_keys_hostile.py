"""The duplicate-key check (duplicate_keys.py) against hostile bodies (rvc62's review of contract62).

A key given twice in an object the worker reads below the top level (an OpenAI body's `voice`
object) in a body over 4 KiB of more than 32 strings was accepted, the last kept. And the check's own
work was a Python step per escaped quote or space between strings, or Python's parser on a body of
megabytes: an 8 MiB body held the event loop up to 1.3 s, up to 120 times msgspec's decode of it. Its work is
counted here in Python steps (deterministic on a loaded machine), not timed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from npu_worker import wire
from npu_worker.errors import BadRequest
from npu_worker.openai_compat.request import SpeechBatchBody, SpeechBody
from npu_worker.protocol import SynthBody

HEADERS = {"Content-Type": "application/json"}
PADDING = ", ".join(f'"x{i}": "{"p" * 120}"' for i in range(40))  # > 4 KiB, > 32 strings
TWO_VOICES = '"voice": {"id": "alloy", "id": "other"}'


def steps_in_python(call: Callable[[], Any], where: str) -> int:
    """Python lines run in files whose path ends with `where` while `call` runs."""
    counted = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal counted
        if frame.f_code.co_filename.endswith(where):
            counted += event == "line"
            return tracer
        return None

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return counted


async def test_a_large_speech_body_giving_its_voice_id_twice_is_refused(worker):
    client = await worker()
    body = '{"model": "tts-1", "input": "안녕", ' + TWO_VOICES + ", " + PADDING + "}"
    assert len(body.encode()) > 4096
    async with client.post("/v1/audio/speech", data=body, headers=HEADERS) as response:
        assert response.status == 400, await response.text()
        error = (await response.json())["error"]
    assert error["code"] == "BadRequest" and 'the key "id" is given twice' in error["message"], error


@pytest.mark.parametrize("padding", [PADDING, ", ".join(f'"x{i}": {i}' for i in range(40))])
def test_the_voice_object_is_checked_whatever_the_body_around_it(padding):
    body = ('{"input": "안녕", ' + TWO_VOICES + ", " + padding + "}").encode()
    with pytest.raises(BadRequest, match='the key "id" is given twice'):
        wire.decode(body, SpeechBody)
    once = body.replace(b'"id": "other"', b'"name": "other"')
    assert wire.decode(once, SpeechBody).voice.id == "alloy"


def large_batch(item: str) -> bytes:
    """An OpenAI batch over 4 KiB of more than 32 strings, `item` among plain ones."""
    plain = ", ".join(f'{{"input": "문장 {i}", "voice": {{"id": "alloy"}}}}' for i in range(90))
    return ('{"items": [' + plain + ", " + item + "]}").encode()


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ('{"input": "안녕", ' + TWO_VOICES + "}", 'the key "id" is given twice'),  # an item's voice object
        (
            '5, {"input": "안녕", "input": "하세요"}',
            'the key "input" is given twice',
        ),  # beside an item not an object
        ('{"input": "안녕", "voice": {"id": "alloy"}}', None),
    ],
)
def test_a_large_openai_batch_has_each_item_and_its_voice_checked(item, said):
    body = large_batch(item)
    assert len(body) > 4096
    if said is None:
        assert len(wire.decode(body, SpeechBatchBody).items) == 91
        return
    with pytest.raises(BadRequest, match=said):
        wire.decode(body, SpeechBatchBody)


async def test_a_large_openai_batch_whose_item_gives_its_voice_id_twice_is_refused(worker):
    client = await worker()
    body = large_batch('{"input": "안녕", ' + TWO_VOICES + "}")
    async with client.post("/v1/audio/speech/batch", data=body, headers=HEADERS) as response:
        assert response.status == 400, await response.text()
        error = (await response.json())["error"]
    assert error["code"] == "BadRequest" and 'the key "id" is given twice' in error["message"], error


SYNTH_TAIL = b'"lang": "ko", "output_path": "/tmp/rvc62.wav"}'
HOSTILE = {
    "escaped quotes in a value": b'{"text": "' + b'\\"' * 60_000 + b'", ' + SYNTH_TAIL,
    "spaces between strings": b'{"text": "a"' + b" " * 120_000 + b", " + SYNTH_TAIL,
    "a quote after a run of backslashes": b'{"text": "' + b"\\\\" * 60_000 + b'", ' + SYNTH_TAIL,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_strings_escapes_and_spaces_cost_no_python_step_each(name):
    body = HOSTILE[name]
    steps = steps_in_python(lambda: wire.decode(body, SynthBody), "duplicate_keys.py")
    assert steps < 500, f"{steps} Python lines for a {len(body)}-byte body"


@pytest.mark.parametrize(
    ("key", "said"),
    [(b'"t\\u0065xt": "a"', "a"), (b'"text": "a", "text": "b"', "an object of the body gives a key twice")],
)
def test_a_body_over_64_kib_is_not_parsed_again_in_python(key, said):
    """A few strings, one key escaped (or written twice), and 100 000 empty arrays: Python's parser
    took 0.7 s on 8 MiB of them; the objects the worker reads are checked in C instead."""
    body = b"{" + key + b', "output_path": "/tmp/rvc62.wav", "junk": [' + b"[], " * 100_000 + b"[]]}"
    outcome: list[str] = []

    def decode() -> None:
        try:
            outcome.append(wire.decode(body, SynthBody).text)
        except BadRequest as refused:
            outcome.append(str(refused))

    assert steps_in_python(decode, "json/decoder.py") == 0
    assert said in outcome[0], outcome
