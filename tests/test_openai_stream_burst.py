"""The speech stream socket writes what its pump has made as one burst (`ws_server/burst.py`), as `/ws`
does: fewer writes per utterance, the same messages in the same order, the same PCM."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from npu_worker.openai_compat import formats, speech, utterance
from npu_worker.openai_compat.core import SpeechRun
from npu_worker.ws_server.burst import BURST_BYTES
from tests.test_ws_burst import WriteCount, _hold_the_loop_until_done
from tests.timing import seconds
from tests.tone_engine import ToneEngine

SENTENCES = ["가" * 10 + ".", "나" * 10 + ".", "다" * 10 + "."]  # 0.2 s each: the utterance fits a burst


async def _receive(ws: Any) -> dict[str, Any] | bytes:
    message = await asyncio.wait_for(ws.receive(), seconds(20))
    return message.data if isinstance(message.data, bytes) else json.loads(message.data)


async def _receive_until(ws: Any, kind: str) -> list[dict[str, Any] | bytes]:
    items: list[dict[str, Any] | bytes] = []
    while not (items and isinstance(items[-1], dict) and items[-1]["type"] == kind):
        items.append(await _receive(ws))
    return items


def _recorded_runs(monkeypatch: Any, module: Any) -> list[SpeechRun]:
    """The runs `module` starts (its `start_speech`, watched)."""
    runs: list[SpeechRun] = []
    start_speech = module.start_speech

    async def recorded(*args: Any, **kwargs: Any) -> SpeechRun:
        run = await start_speech(*args, **kwargs)
        runs.append(run)
        return run

    monkeypatch.setattr(module, "start_speech", recorded)
    return runs


async def _fully_made_utterance(
    worker: Any, monkeypatch: Any, sentences: list[str], **config: Any
) -> tuple[ToneEngine, int, list[dict[str, Any] | bytes]]:
    """One utterance whose sentences are all queued and made while the loop is held: the writes to the
    socket from then on, and every message received."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    client = await worker(engine)
    runs = _recorded_runs(monkeypatch, utterance)
    ws = await client.session.ws_connect(client.make_url("/v1/audio/speech/stream"))
    try:
        await ws.send_json({"type": "session.config", "voice": "default", "model": "tts-1", **config})
        assert (await _receive(ws))["type"] == "session.configured"
        await ws.send_json({"type": "input.text", "text": " ".join(sentences)})
        await ws.send_json({"type": "input.done"})
        items = await _receive_until(ws, "audio.start")  # sentence 0 runs; the engine waits on the gate
        async with asyncio.timeout(seconds(10)):
            while len(runs) < len(sentences):  # every sentence queued
                await asyncio.sleep(0.01)
        writes = WriteCount(monkeypatch, client.port)
        engine.gate.set()
        for run in runs:
            _hold_the_loop_until_done(client, run.job)
        items += await _receive_until(ws, "session.done")
        return engine, writes.count, items
    finally:
        engine.gate.set()
        await ws.close()


async def test_a_fully_queued_utterance_goes_out_in_one_write_each_message_whole(worker, monkeypatch):
    engine, written, items = await _fully_made_utterance(worker, monkeypatch, SENTENCES)
    assert written == 1
    events = [item for item in items if isinstance(item, dict)]
    assert [e["type"] for e in events] == [
        *("audio.start", "first_audio", "audio.done"),
        *("audio.start", "audio.done") * 2,
        "session.done",
    ]
    assert events[1]["sentence_index"] == 0
    pcm: dict[int, bytes] = {}
    frames, current = 0, -1
    for item in items:
        if isinstance(item, bytes):
            pcm[current] += item
            frames += 1
        elif item["type"] == "audio.start":
            current = item["sentence_index"]
            pcm[current] = b""
    assert sum(e["chunk_count"] for e in events if e["type"] == "audio.done") == frames
    for index, text in enumerate(SENTENCES):
        expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
        assert pcm[index] == expected
    assert sum(map(len, pcm.values())) < BURST_BYTES


async def test_whole_sentence_frames_go_out_once_a_burst_holds_64_kib(worker, monkeypatch):
    """`stream_audio: false`: each sentence is one frame (about 1 s: 49 KB); a burst is written once it
    holds 64 KiB, so a reader that has stopped finds no more than that and a sentence waiting."""
    sentences = ["가" * 50 + ".", "나" * 50 + ".", "다" * 50 + "."]
    engine, written, items = await _fully_made_utterance(worker, monkeypatch, sentences, stream_audio=False)
    frames = [item for item in items if isinstance(item, bytes)]
    for frame, text in zip(frames, sentences, strict=True):
        assert frame == to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert written == 2  # sentences 0 and 1 (over 64 KiB), then sentence 2 with the rest


async def _fully_made_answer(
    worker: Any, monkeypatch: Any, body: dict[str, Any]
) -> tuple[ToneEngine, int, bytes]:
    """One `POST /v1/audio/speech` made whole while the loop is held: the writes to the socket from
    the engine's start on, and the body received."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    client = await worker(engine)
    runs = _recorded_runs(monkeypatch, speech)
    answer = asyncio.ensure_future(client.post("/v1/audio/speech", json={"model": "tts-1", **body}))
    try:
        async with asyncio.timeout(seconds(10)):
            while not (runs and engine.calls):  # the engine has begun and waits on the gate
                await asyncio.sleep(0.01)
        writes = WriteCount(monkeypatch, client.port)
        engine.gate.set()
        _hold_the_loop_until_done(client, runs[0].job)
        response = await answer
        data = await response.read()
        return engine, writes.count, data
    finally:
        engine.gate.set()
        answer.cancel()


async def test_a_fully_made_sse_answer_goes_out_in_three_writes_each_event_whole(worker, monkeypatch):
    """The headers (aiohttp sends a StreamResponse's at `prepare`), its deltas together, then
    `speech.audio.done` with the chunked body's end."""
    text = "가" * 30  # 0.6 s in 12 chunks: its deltas fit a burst
    body = {"input": text, "voice": "default", "stream_format": "sse", "response_format": "pcm"}
    engine, written, data = await _fully_made_answer(worker, monkeypatch, body)
    assert written == 3
    events = [json.loads(line[len(b"data: ") :]) for line in data.split(b"\n\n") if line]
    assert [e["type"] for e in events] == ["speech.audio.delta"] * 12 + ["speech.audio.done"]
    pcm = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert pcm == to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()


async def test_a_fully_made_audio_stream_goes_out_in_three_writes(worker, monkeypatch):
    """`stream_format: audio` wrote each chunk on its own (14 writes for these 12): now the headers,
    the audio made, then the chunked body's end, the same bytes."""
    text = "가" * 30  # 0.6 s in 12 chunks: 28.8 KB of pcm, within a burst
    body = {"input": text, "voice": "default", "response_format": "pcm"}
    engine, written, data = await _fully_made_answer(worker, monkeypatch, body)
    assert written == 3
    assert data == to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()


async def test_a_fully_made_long_audio_stream_is_written_in_64_kib_bursts(worker, monkeypatch):
    """A burst is written once it holds 64 KiB: a reader that has stopped finds no more than that
    waiting beside what its socket holds (5 s: 240 KB in 100 chunks; one write each, 102 in all)."""
    text = "가" * 250
    body = {"input": text, "voice": "default", "response_format": "wav"}
    engine, written, data = await _fully_made_answer(worker, monkeypatch, body)
    pcm = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert data[44:] == pcm and data[:4] == b"RIFF"
    # the headers; 28 chunks of 2 400 bytes reach 64 KiB: 3 bursts, then the last 16 chunks; the end
    assert written == 1 + 4 + 1


async def _first_bytes(response: Any, stream_format: str) -> bytes:
    if stream_format == "sse":
        return await response.content.readuntil(b"\n\n")
    return await response.content.readany()


@contextlib.asynccontextmanager
async def _answer_at_its_first_bytes(
    client: Any, engine: ToneEngine, runs: list[SpeechRun], body: dict[str, Any], released: threading.Event
) -> AsyncIterator[tuple[Any, bytes]]:
    """A `POST /v1/audio/speech` whose every chunk waits for the loop at once (held until the job's
    done), once its first bytes are read (the headers came with the first write too): its response and
    those bytes. On leaving, `released` and the engine's gate are set and the request is given up."""
    answer = asyncio.ensure_future(client.post("/v1/audio/speech", json=body))
    try:
        async with asyncio.timeout(seconds(10)):
            while not (runs and engine.calls):  # the engine has begun and waits on the gate
                await asyncio.sleep(0.01)
        engine.gate.set()
        _hold_the_loop_until_done(client, runs[0].job)
        async with asyncio.timeout(seconds(5)):
            response = await answer
            first = await _first_bytes(response, body["stream_format"])
        yield response, first
    finally:
        released.set()
        engine.gate.set()
        answer.cancel()


@pytest.mark.parametrize("stream_format", ["sse", "audio"])
async def test_audio_made_is_written_before_the_end_is_encoded_on_a_thread(
    worker, monkeypatch, stream_format
):
    """The encoder's end runs on a thread (a wait for the loop): the audio made before it is on the
    wire while it runs, not held until it returns (SSE's deltas were: a whole file's encoding, or a
    slow thread pool, delayed every event of a fully made answer)."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    client = await worker(engine)
    runs = _recorded_runs(monkeypatch, speech)
    ending, released = threading.Event(), threading.Event()
    finish = formats.StreamEncoder.finish

    def held_finish(self: formats.StreamEncoder) -> bytes:
        ending.set()
        released.wait(seconds(20))
        return finish(self)

    monkeypatch.setattr(formats.StreamEncoder, "finish", held_finish)
    body = {"model": "tts-1", "input": "가" * 10, "voice": "default", "stream_format": stream_format}
    body["response_format"] = "pcm"
    async with _answer_at_its_first_bytes(client, engine, runs, body, released) as (response, first):
        assert await asyncio.to_thread(ending.wait, seconds(5))  # (read before the end was encoded)
        released.set()
        rest = await response.read()
        if stream_format == "sse":
            assert json.loads(first[len(b"data: ") :])["type"] == "speech.audio.delta"
            assert rest.endswith(b"\n\n") and b"speech.audio.done" in rest
        else:
            assert (
                first + rest == to_pcm16(engine.render(SynthesisRequest("가" * 10))).astype("<i2").tobytes()
            )


@pytest.mark.parametrize("stream_format", ["sse", "audio"])
async def test_opus_made_is_written_before_the_next_chunk_is_encoded(worker, monkeypatch, stream_format):
    """Opus is encoded as it goes, each chunk on a thread: what was made is on the wire while the next
    chunk is encoded, though that chunk was already here (SSE's deltas were held until the whole
    answer was)."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    client = await worker(engine)
    runs = _recorded_runs(monkeypatch, speech)
    encoding, released = threading.Event(), threading.Event()
    feed, made = formats.StreamEncoder.feed, []

    def held_feed(self: formats.StreamEncoder, samples: Any) -> bytes:
        if made:  # a delta was made: this next chunk's encoding waits for the test
            encoding.set()
            released.wait(seconds(20))
        data = feed(self, samples)
        made.extend([data] if data else [])
        return data

    monkeypatch.setattr(formats.StreamEncoder, "feed", held_feed)
    body = {"model": "tts-1", "input": "가" * 30, "voice": "default", "stream_format": stream_format}
    body["response_format"] = "opus"
    async with _answer_at_its_first_bytes(client, engine, runs, body, released) as (response, first):
        assert await asyncio.to_thread(encoding.wait, seconds(5))  # (read before the next was encoded)
        released.set()
        rest = await response.read()
        if stream_format == "sse":
            assert json.loads(first[len(b"data: ") :])["type"] == "speech.audio.delta"
            assert rest.endswith(b"\n\n") and b"speech.audio.done" in rest
        else:
            assert first.startswith(b"OggS") and rest
