"""A JSON body or message that gives one key twice (`{"text": "a", "text": "b"}`) is a 400 `BadRequest`
naming the key, on every JSON route: msgspec kept the last, while a proxy or a WAF in front of the
worker may read the first, so one request meant two things (contract62). Keys repeated across objects
(a batch's sections) are fine, as is a key in a value. Real server, real sockets."""

from __future__ import annotations

import pytest

from tests.test_ws_support import connect, run_request
from tests.timing import seconds

SAID = 'the key "text" is given twice in one object'
HEADERS = {"Content-Type": "application/json"}

V1_BODIES = {
    "/synth": '{"text": "가나다", "lang": "ko", "text": "라마바"}',  # (no output_path: refused for the key first)
    "/synth_batch": '{"sections": [{"idx": 0, "text": "가", "text": "나"}], "lang": "ko"}',
    "/synth_batch ": '{"sections": [{"idx": 0, "text": "가"}], "lang": "ko", "sections": []}',
}
OPENAI_BODIES = {
    "/v1/audio/speech": '{"model": "tts-1", "input": "안녕", "voice": "default", "input": "하세요"}',
    "/v1/audio/speech/batch": '{"items": [{"input": "안녕", "input": "하세요"}]}',
}


@pytest.mark.parametrize("path", list(V1_BODIES))
async def test_a_v1_body_giving_a_key_twice_is_refused_naming_it(worker, path):
    client = await worker()
    async with client.post(path.strip(), data=V1_BODIES[path], headers=HEADERS) as response:
        assert response.status == 400, await response.text()
        error = (await response.json())["error"]
    key = "sections" if path.endswith(" ") else "text"
    assert error.startswith(f'BadRequest: the key "{key}" is given twice in one object'), error


@pytest.mark.parametrize("path", list(OPENAI_BODIES))
async def test_an_openai_body_giving_a_key_twice_is_refused_naming_it(worker, path):
    client = await worker()
    async with client.post(path, data=OPENAI_BODIES[path], headers=HEADERS) as response:
        assert response.status == 400, await response.text()
        error = (await response.json())["error"]
    assert error["code"] == "BadRequest" and error["type"] == "invalid_request_error", error
    assert 'the key "input" is given twice in one object' in error["message"], error


async def test_an_escaped_spelling_of_the_same_key_is_refused_too(worker):
    """`"te\\u0078t"` is `"text"` once decoded: the bytes differ, the key does not."""
    client = await worker()
    body = '{"sections": [{"idx": 0, "te\\u0078t": "가나다", "text": "라마바"}], "lang": "ko"}'
    async with client.post("/synth_batch", data=body, headers=HEADERS) as response:
        assert response.status == 400
        assert SAID in (await response.json())["error"]


async def test_a_ws_message_giving_a_key_twice_is_refused_and_the_socket_goes_on(worker):
    client = await worker()
    ws = await connect(client)
    await ws.send_text('{"type": "synth", "text": "가나다", "text": "라마바"}')
    error = await ws.receive()
    assert isinstance(error, dict) and error["event"] == "error" and error["idx"] is None
    assert error["error"].startswith(f"BadRequest: {SAID}"), error
    transcript = await run_request(ws, {"type": "synth", "text": "그래도 된다."})
    assert transcript.done["ok_count"] == 1
    await ws.close()


async def test_an_openai_stream_message_giving_a_key_twice_is_refused(worker):
    client = await worker()
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_str('{"type": "input.text", "text": "안녕하세요. ", "text": "다른 문장. "}')
        refused = await ws.receive_json(timeout=seconds(10))
    assert (refused["type"], refused["code"]) == ("error", "BadRequest"), refused
    assert SAID in refused["message"], refused


async def test_keys_repeated_across_objects_and_inside_values_are_fine(worker):
    client = await worker()
    body = '{"sections": [{"idx": 0, "text": "\\"text\\": 가"}, {"idx": 1, "text": "나"}], "lang" : "ko"}'
    async with client.post("/synth_batch", data=body, headers=HEADERS) as response:
        assert response.status == 200, await response.text()
        await response.read()


@pytest.mark.parametrize(
    ("document", "refused"),
    [
        (b'{"a": 1, "a" \n\t : 2}', "a"),  # spaced before its colon
        (b'{"a": "\\":x", "\\":x": 1, "\\":x": 2}', '\\":x'),  # a key holding an escaped quote
        (b'{"a": "x\\\\", "a": 1}', "a"),  # a value ending in an escaped backslash
        (b'{"": 1, "": 2}', ""),
        (b'{"o": {"k": 1, "k": 2}}', "k"),
        (b'{"a": "\\"a\\": 1", "b": {"a": 1}, "a2": [{"a": 1}, {"a": 2}]}', None),
        (b'{"n": 1e400, "big": ' + b"9" * 5000 + b', "n": 0}', "n"),  # numbers Python cannot convert
    ],
)
def test_the_repeated_key_is_found_however_it_is_written(document, refused):
    from npu_worker.duplicate_keys import refuse_duplicate_keys
    from npu_worker.errors import BadRequest

    if refused is None:
        refuse_duplicate_keys(document)
        return
    with pytest.raises(BadRequest) as caught:
        refuse_duplicate_keys(document)
    assert f'the key "{refused}" is given twice' in str(caught.value)


def many_sections(count: int, extra: str = "", text: str = "가") -> bytes:
    sections = [f'{{"idx": {i}, "text": "{text}"{extra if i == count // 2 else ""}}}' for i in range(count)]
    return ('{"sections": [' + ", ".join(sections) + '], "lang": "ko"}').encode()


@pytest.mark.parametrize(
    ("extra", "text", "said"),
    [
        ("", "가", None),
        (', "text": "나"', "가", 'the key "text" is given twice'),
        (', "te\\u0078t": "나"', "가", 'the key "text" is given twice'),
        (', "text": "a\\u003ab"', "a:b", 'the key "text" is given twice'),  # an escaped colon for a lost one
        ("", "a\\\\u003ab", None),  # a backslash, then `u003a`: no colon, no repetition
        (', "junk": {"k": 1, "k": 2}', "가", 'the key "k" is given twice'),
    ],
)
# many strings: under KEYS_SCANNED_BYTES (every string looked at), under MAX_WORDED_BYTES (the objects the
# worker reads, in C, the key then named), over it (told without the name)
@pytest.mark.parametrize("count", [40, 200, 4000])
def test_a_batch_of_many_sections_is_checked_object_by_object(extra, text, said, count):
    from npu_worker import duplicate_keys, wire
    from npu_worker.protocol import BadRequest, BatchBody

    body = many_sections(count, extra, text)
    scanned = len(body) <= duplicate_keys.KEYS_SCANNED_BYTES
    assert scanned == (count == 40) and (len(body) <= duplicate_keys.MAX_WORDED_BYTES) == (count < 1000)
    if count > 40 and "junk" in extra:  # a larger body: an ignored field's value is not looked into
        said = None
    if said is None:
        assert len(wire.decode(body, BatchBody).sections) == count
        return
    with pytest.raises(BadRequest) as caught:
        wire.decode(body, BatchBody)
    if count > 1000:  # too large to parse again: told without the key's name
        assert "an object of the body gives a key twice" in str(caught.value)
    else:
        assert said in str(caught.value)
