"""WS /v1/audio/speech/stream with the `websockets` client: fragments in, sentences of PCM out, in order."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets

from npu_worker.errors import UnknownLanguage
from tests.openai_support import RATE, decode, expected_samples
from tests.test_ws_support import ChunkGate
from tests.timing import seconds
from tests.tone_engine import ToneEngine

LECTURE = "첫 번째 문장입니다. 두 번째 문장도 있습니다! 끝"


SENTENCES = ["첫 번째 문장입니다.", "두 번째 문장도 있습니다!", "끝"]


def stream_url(client) -> str:
    return str(client.make_url("/v1/audio/speech/stream")).replace("http://", "ws://")


async def receive(ws) -> dict[str, Any] | bytes:
    message = await asyncio.wait_for(ws.recv(), seconds(20))
    return message if isinstance(message, bytes) else json.loads(message)


async def receive_until(ws, kind: str) -> list[dict[str, Any] | bytes]:
    items: list[dict[str, Any] | bytes] = []
    while True:
        item = await receive(ws)
        items.append(item)
        if isinstance(item, dict) and item["type"] == kind:
            return items


async def send_fragments(ws, text: str, size: int = 3) -> None:
    for start in range(0, len(text), size):
        await ws.send(json.dumps({"type": "input.text", "text": text[start : start + size]}))


def sentences_of(items: list[dict[str, Any] | bytes]) -> dict[int, bytes]:
    """PCM per sentence index, from audio.start/binary/audio.done runs."""
    pcm: dict[int, bytes] = {}
    current = None
    for item in items:
        if isinstance(item, bytes):
            assert current is not None, "audio outside audio.start/audio.done"
            pcm[current] += item
        elif item["type"] == "audio.start":
            current = item["sentence_index"]
            pcm[current] = b""
        elif item["type"] == "audio.done":
            current = None
    return pcm


async def test_fragments_become_sentences_spoken_in_order(worker):
    engine = ToneEngine()
    client = await worker(engine)
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "session.config", "voice": "default", "model": "tts-1"}))
        configured = await receive(ws)
        assert configured == {"type": "session.configured", "sample_rate": RATE, "format": "pcm"}
        await send_fragments(ws, LECTURE)
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    events = [item for item in items if isinstance(item, dict)]
    starts = [e for e in events if e["type"] == "audio.start"]
    assert [e["sentence_text"] for e in starts] == SENTENCES
    assert all((e["format"], e["sample_rate"], e["utterance_index"]) == ("pcm", RATE, 0) for e in starts)
    assert events[-1] == {"type": "session.done", "utterance_index": 0, "total_sentences": 3}
    assert engine.calls == SENTENCES
    pcm = sentences_of(items)
    for index, sentence in enumerate(SENTENCES):
        assert len(pcm[index]) // 2 == expected_samples(sentence)
    dones = [e for e in events if e["type"] == "audio.done"]
    assert [(d["sentence_index"], d["total_bytes"], d["error"]) for d in dones] == [
        (i, len(pcm[i]), False) for i in range(3)
    ]
    first_audio = [e for e in events if e["type"] == "first_audio"]
    assert len(first_audio) == 1 and first_audio[0]["sentence_index"] == 0
    assert 0 <= first_audio[0]["ttfa_ms"] <= first_audio[0]["since_first_text_ms"]


async def test_the_first_sentence_is_spoken_before_the_rest_of_the_text_arrives(worker):
    client = await worker()
    async with websockets.connect(stream_url(client)) as ws:
        await send_fragments(ws, "첫 문장입니다. ")
        start = await receive(ws)
        assert start["type"] == "audio.start" and start["sentence_text"] == "첫 문장입니다."
        assert isinstance(await receive(ws), bytes)  # audio while the utterance is still open
        await send_fragments(ws, "그리고 두 번째.")
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    assert items[-1]["total_sentences"] == 2


async def test_the_socket_stays_open_for_the_next_utterance_and_session_close_ends_it(worker):
    client = await worker()
    async with websockets.connect(stream_url(client)) as ws:
        for utterance in range(2):
            await send_fragments(ws, f"발화 {utterance} 입니다.")
            await ws.send(json.dumps({"type": "input.done"}))
            done = (await receive_until(ws, "session.done"))[-1]
            assert done == {"type": "session.done", "utterance_index": utterance, "total_sentences": 1}
        await send_fragments(ws, "마지막 인사")
        await ws.send(json.dumps({"type": "session.close"}))
        items = await receive_until(ws, "session.done")  # the open utterance is finished first
        assert items[-1]["utterance_index"] == 2
        with pytest.raises(websockets.ConnectionClosedOK):
            await receive(ws)


async def test_frames_follow_the_growing_schedule_over_the_utterance(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05), chunk_schedule_ms=(40.0, 80.0, 160.0))
    async with websockets.connect(stream_url(client)) as ws:
        await send_fragments(ws, "가" * 30 + ". " + "나" * 30 + ".")
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    frames = [len(item) // 2 for item in items if isinstance(item, bytes)]
    assert frames[:3] == [960, 1920, 3840]
    second_start = next(
        i for i, item in enumerate(items) if isinstance(item, dict) and item.get("sentence_index") == 1
    )
    later = [len(item) // 2 for item in items[second_start:] if isinstance(item, bytes)]
    assert later[0] == 3840  # the schedule does not restart per sentence


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"type": "session.config", "voice": "nobody"}, "voice"),
        ({"type": "session.config", "response_format": "aac"}, "response_format"),
        ({"type": "session.config", "speed": 9}, "speed"),
        ({"type": "session.config", "ref_audio": "/etc/passwd"}, "ref_audio"),  # outside the roots
        ({"type": "input.text", "text": 5}, "text"),
        ({"type": "input.text", "text": "\ud800"}, "text"),
        ({"type": "dance"}, None),
        ({"type": ["input.done"]}, None),  # crashed the session (TypeError: unhashable type: 'list')
    ],
)
async def test_a_bad_message_is_an_error_event_and_the_session_goes_on(worker, message, param):
    client = await worker()
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps(message))
        error = await receive(ws)
        assert error["type"] == "error" and error["param"] == param and error["message"]
        await send_fragments(ws, "그래도 계속됩니다.")
        await ws.send(json.dumps({"type": "input.done"}))
        assert (await receive_until(ws, "session.done"))[-1]["total_sentences"] == 1


async def test_a_fragment_over_a_one_character_limit_is_told_the_limit_in_the_singular(worker):
    """With `--max-text-chars 1` a longer fragment was told "at most 1 characters"."""
    client = await worker(max_text_chars=1)
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "input.text", "text": "가나"}))
        error = await receive(ws)
    assert (error["code"], error["param"]) == ("BadRequest", "text"), error
    assert error["message"] == "a fragment may have at most 1 character", error


async def test_not_json_is_an_error_event(worker):
    client = await worker()
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send("{oops")
        assert (await receive(ws))["code"] == "BadRequest"


async def test_input_done_without_text_still_answers_session_done(worker):
    client = await worker()
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "input.done"}))
        assert await receive(ws) == {"type": "session.done", "utterance_index": 0, "total_sentences": 0}
        await ws.send(json.dumps({"type": "session.close"}))
        with pytest.raises(websockets.ConnectionClosedOK):
            await receive(ws)


@pytest.mark.parametrize("fmt", ["wav", "mp3", "flac"])
async def test_a_file_format_sends_each_sentence_as_one_whole_file(worker, fmt):
    client = await worker()
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "session.config", "response_format": fmt}))
        assert (await receive(ws))["format"] == fmt
        await send_fragments(ws, LECTURE)
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    starts = [i for i in items if isinstance(i, dict) and i["type"] == "audio.start"]
    assert all(start["format"] == fmt for start in starts)
    files = [item for item in items if isinstance(item, bytes)]
    assert len(files) == len(SENTENCES)
    for data, sentence in zip(files, SENTENCES, strict=True):
        samples, rate = decode(data, fmt)
        assert (samples.size, rate) == (expected_samples(sentence), RATE)
    assert sum(isinstance(i, dict) and i["type"] == "first_audio" for i in items) == 1


async def test_stream_audio_false_sends_each_sentence_as_one_pcm_frame(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05))
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "session.config", "stream_audio": False}))
        await receive(ws)
        await send_fragments(ws, LECTURE)
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    frames = [item for item in items if isinstance(item, bytes)]
    assert [len(frame) // 2 for frame in frames] == [expected_samples(s) for s in SENTENCES]


async def test_a_language_the_engine_lacks_is_refused_at_session_config(worker):
    def check_language(lang: str) -> None:
        if lang != "ko":
            raise UnknownLanguage(f"no voice for {lang!r}")

    engine = ToneEngine()
    engine.check_language = check_language  # type: ignore[attr-defined]
    client = await worker(engine)
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "session.config", "language": "xx"}))
        error = await receive(ws)
        assert error["type"] == "error" and error["code"] == "UnknownLanguage"
        assert error["param"] == "language"
        await send_fragments(ws, "그래도 계속됩니다.")  # the session keeps its earlier configuration
        await ws.send(json.dumps({"type": "input.done"}))
        assert (await receive_until(ws, "session.done"))[-1]["total_sentences"] == 1


async def test_ttfa_runs_from_the_arrival_of_the_input_done_that_completed_the_sentence(worker):
    """A sentence completed by `input.done` was timed from when the message was handled, not when it
    came: one that waited behind an earlier utterance's sentences reported 1.1 s of a 2.1 s wait."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    hold = seconds(1.0)
    try:
        async with websockets.connect(stream_url(client), max_size=None) as ws:
            await ws.send(json.dumps({"type": "input.text", "text": "문장입니다. " * 6}))
            await ws.send(json.dumps({"type": "input.done"}))
            await ws.send(json.dumps({"type": "input.text", "text": "둘째 발화"}))  # both wait, unhandled,
            await ws.send(json.dumps({"type": "input.done"}))  # for the first utterance's places
            await asyncio.sleep(hold)
            gate.open()
            while True:
                item = await receive(ws)
                if isinstance(item, dict) and item["type"] == "first_audio" and item["utterance_index"] == 1:
                    break
    finally:
        gate.open()
    assert item["ttfa_ms"] >= hold * 1000
    assert item["since_first_text_ms"] - item["ttfa_ms"] < hold * 1000 / 2  # messages sent together


async def test_text_sent_while_the_engine_loads_waits_for_it(worker):
    """Each fragment sent while the engine loaded was refused (Loading) and its text lost: the utterance
    was heard from its middle. Now the messages wait for the engine and the utterance is spoken whole."""
    engine = ToneEngine(chunk_seconds=0.05, load_delay=0.5)
    client = await worker(engine, wait_loaded=False)
    async with websockets.connect(stream_url(client), max_size=None) as ws:
        await ws.send(json.dumps({"type": "session.config", "speed": 2.0}))
        await send_fragments(ws, LECTURE)
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    events = [item for item in items if isinstance(item, dict)]
    assert [e["type"] for e in events if e["type"] in ("error", "session.configured")] == [
        "session.configured"
    ]
    assert [e["sentence_text"] for e in events if e["type"] == "audio.start"] == SENTENCES
    assert [request.speed_factor for request in engine.requests] == [2.0] * len(SENTENCES)


async def test_fragments_within_the_text_limit_never_make_a_sentence_over_it(worker):
    """A sentence joins a fragment to the text that waited before it: a fragment within
    --max-text-chars whose last clause mark lay past that limit was one sentence over it, refused with
    TextTooLong (and unspoken), though the caller broke no limit."""
    engine = ToneEngine()
    client = await worker(engine, max_text_chars=100)
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "input.text", "text": "가나다 " * 10}))  # no mark: it waits
        await ws.send(json.dumps({"type": "input.text", "text": "오늘은 전압을 배웁니다 " * 7}))
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    events = [item for item in items if isinstance(item, dict)]
    assert [e for e in events if e["type"] == "error"] == []
    assert all(len(call) <= 100 for call in engine.calls)
    assert "".join(engine.calls).replace(" ", "") == ("가나다" * 10 + "오늘은전압을배웁니다" * 7)


NOT_JSON = [
    '{"input": "a", "n": ' + "1" * 5000 + "}",  # a number Python's parser cannot convert: was "has no type"
    "[" * 2000,  # was "the message is not a JSON object"
    "{not json",
    '{"input": "a"',
]


@pytest.mark.parametrize("text", NOT_JSON, ids=["digits", "deep", "syntax", "unended"])
async def test_a_message_that_is_not_json_is_worded_as_the_http_body_is(worker, text):
    """The stream socket and `POST /v1/audio/speech` word the same invalid JSON the same way."""
    client = await worker()
    answer = await client.post("/v1/audio/speech", data=text, headers={"Content-Type": "application/json"})
    assert answer.status == 400
    http = (await answer.json())["error"]
    assert http["code"] == "BadRequest" and http["message"].startswith("invalid JSON: "), http
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(text)
        error = await receive(ws)
    assert isinstance(error, dict) and error["type"] == "error", error
    assert (error["code"], error["message"]) == ("BadRequest", http["message"])


async def test_a_v1_ws_message_of_too_many_digits_is_invalid_json(worker):
    client = await worker()
    ws = await client.ws_connect("/ws")
    await ws.send_str(NOT_JSON[0])
    error = json.loads((await ws.receive(timeout=seconds(20))).data)
    await ws.close()
    assert error["error"] == "BadRequest: invalid JSON: a number has too many digits", error
