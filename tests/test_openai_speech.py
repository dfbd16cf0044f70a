"""POST /v1/audio/speech through the official `openai` SDK against a worker on a real socket:
every response format, streamed and whole, SSE, speed, language."""

from __future__ import annotations

import asyncio
import base64
import json
import struct

import numpy as np
import openai
import pytest

from npu_worker.errors import EngineError
from npu_worker.openai_compat.formats import available_formats
from tests.openai_support import RATE, TEXT, async_sdk, decode, expected_samples, sync_sdk
from tests.test_ws_support import ChunkGate
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


@pytest.mark.parametrize("fmt", ["wav", "pcm", "flac", "mp3", "opus"])
async def test_each_response_format_decodes_to_the_synthesised_length_and_rate(worker, fmt):
    assert fmt in available_formats(), "the bundled libsndfile encodes all five formats"
    client = await worker()
    sdk = async_sdk(client)
    response = await sdk.audio.speech.create(model="tts-1", input=TEXT, voice="default", response_format=fmt)
    samples, rate = decode(response.content, fmt)
    assert rate == RATE
    if fmt == "mp3":  # streamed: it keeps the encoder's delay and padding (test_openai_mp3_stream.py)
        assert expected_samples(TEXT) <= samples.size <= expected_samples(TEXT) + 6 * 576
    else:
        assert samples.size == expected_samples(TEXT)
    assert float(np.max(np.abs(samples))) > 0.1  # sound, not silence


async def test_a_null_field_speaks_with_its_default_voice_included(worker):
    """`"voice": null` (a client that sends every field, unset ones as null) was a 400 while every
    other optional field's null meant its default; on a batch and the stream socket's config too."""
    client = await worker()
    base = {"input": TEXT, "response_format": "wav"}
    for nulls in ({"voice": None}, {"voice": None, "speed": None, "model": None, "language": None}):
        response = await client.post("/v1/audio/speech", json={**base, **nulls})
        assert response.status == 200, await response.text()
        samples, _ = decode(await response.read(), "wav")
        assert samples.size == expected_samples(TEXT)
    batch = {
        "voice": None,
        "speed": 2.0,
        "items": [{"input": TEXT, "voice": None, "speed": None}, {"input": TEXT}],
    }
    body = await client.post("/v1/audio/speech/batch", json={**batch, "response_format": "wav"})
    results = (await body.json())["results"]
    for result in results:  # an item's null is the batch's default, as a field it left out
        samples, _ = decode(base64.b64decode(result["audio_data"]), "wav")
        assert samples.size == expected_samples(TEXT, speed=2.0)
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_json({"type": "session.config", "voice": None})
        assert (await ws.receive_json(timeout=seconds(5)))["type"] == "session.configured"


async def test_the_synchronous_sdk_works_too(worker):
    client = await worker()
    sdk = sync_sdk(client)
    response = await asyncio.to_thread(
        sdk.audio.speech.create, model="tts-1", input=TEXT, voice="default", response_format="wav"
    )
    samples, rate = decode(response.content, "wav")
    assert (samples.size, rate) == (expected_samples(TEXT), RATE)

    def stream_opus() -> bytes:
        with sdk.audio.speech.with_streaming_response.create(
            model="tts-1", input=TEXT, voice="default", response_format="opus"
        ) as streamed:
            return b"".join(streamed.iter_bytes())

    samples, rate = decode(await asyncio.to_thread(stream_opus), "opus")
    assert (samples.size, rate) == (expected_samples(TEXT), RATE)


async def test_streaming_response_yields_a_wav_with_the_unknown_length_header_in_pieces(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05))
    sdk = async_sdk(client)
    text = "가" * 60
    pieces = []
    async with sdk.audio.speech.with_streaming_response.create(
        model="tts-1", input=text, voice="default", response_format="wav"
    ) as response:
        assert response.headers["content-type"] == "audio/wav"
        async for piece in response.iter_bytes():
            pieces.append(piece)
    data = b"".join(pieces)
    assert data[:4] == b"RIFF" and struct.unpack("<I", data[40:44])[0] == 0xFFFFFFFF
    samples, rate = decode(data, "wav")
    assert (samples.size, rate) == (expected_samples(text), RATE)


async def test_streamed_pcm_arrives_before_the_engine_has_finished(worker):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    text = "나" * 50
    gate.allow(2)  # the engine may make two 50 ms chunks, then waits
    try:
        async with client.post(
            "/v1/audio/speech", json={"input": text, "response_format": "pcm"}
        ) as response:
            assert response.status == 200
            first = await response.content.readany()
            assert 0 < len(first) <= 2 * int(0.05 * RATE) * 2
            gate.open()
            rest = await response.read()
    finally:
        gate.open()
    assert len(first + rest) == expected_samples(text) * 2


class FailsMidway(ToneEngine):
    """Fails after a few chunks: the audio has begun, the text is not finished."""

    def stream(self, request):  # noqa: ANN001, ANN201 - ToneEngine's signature
        for number, chunk in enumerate(super().stream(request)):
            if number == 3:
                raise EngineError("the engine broke mid-text")
            yield chunk


@pytest.mark.parametrize("fmt", ["flac"])
async def test_a_whole_file_format_answers_whole_or_as_an_error(worker, fmt):
    """flac has no byte to send before the end (mp3 streams: test_openai_mp3_stream.py), yet the headers went out with the first
    chunk: a failure after it was a cut connection, not an error, and no answer had a Content-Length."""
    if fmt not in available_formats():
        pytest.skip(f"this libsndfile cannot encode {fmt}")
    client = await worker(ToneEngine(chunk_seconds=0.05))
    body = {"input": "가" * 30, "response_format": fmt}
    async with client.post("/v1/audio/speech", json=body) as response:
        assert response.status == 200
        data = await response.read()
        assert response.headers.get("Content-Length") == str(len(data))
    samples, _ = decode(data, fmt)
    assert samples.size == expected_samples("가" * 30)
    client = await worker(FailsMidway(chunk_seconds=0.05))
    for stream_format in ("audio", "sse"):  # no delta event before the end either
        async with client.post("/v1/audio/speech", json={**body, "stream_format": stream_format}) as response:
            assert response.status == 500, stream_format
            assert (await response.json())["error"]["code"] == "EngineError"


@pytest.mark.parametrize("speed", [0.5, 2.0])
async def test_speed_maps_to_the_speed_factor(worker, speed):
    engine = ToneEngine()
    client = await worker(engine)
    response = await async_sdk(client).audio.speech.create(
        model="tts-1", input=TEXT, voice="default", response_format="pcm", speed=speed
    )
    assert engine.requests[-1].speed_factor == speed
    assert len(response.content) // 2 == expected_samples(TEXT, speed)


async def test_language_defaults_to_korean_and_instructions_are_ignored(worker):
    engine = ToneEngine()
    client = await worker(engine)
    sdk = async_sdk(client)
    await sdk.audio.speech.create(
        model="tts-1-hd", input=TEXT, voice="default", response_format="pcm", instructions="whisper"
    )
    assert engine.requests[-1].lang == "ko"
    await sdk.audio.speech.create(
        model="tts-1", input="Hello.", voice="default", response_format="pcm", extra_body={"language": "en"}
    )
    assert engine.requests[-1].lang == "en"


async def test_sse_sends_base64_deltas_then_done(worker):
    client = await worker()
    body = {"model": "tts-1", "input": TEXT, "response_format": "pcm", "stream_format": "sse"}
    async with client.post("/v1/audio/speech", json=body) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        raw = (await response.read()).decode()
    events = [json.loads(block[len("data: ") :]) for block in raw.split("\n\n") if block.strip()]
    assert {e["type"] for e in events[:-1]} == {"speech.audio.delta"}
    assert events[-1]["type"] == "speech.audio.done"
    assert events[-1]["sample_rate"] == RATE
    usage = events[-1]["usage"]  # OpenAI's shape: the total is the sum (it was 0 beside input_tokens)
    assert usage == {"input_tokens": len(TEXT), "output_tokens": 0, "total_tokens": len(TEXT)}
    pcm = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert len(pcm) // 2 == expected_samples(TEXT)


async def test_sse_in_a_compressed_format_is_one_decodable_file(worker):
    client = await worker()
    body = {"input": TEXT, "response_format": "flac", "stream_format": "sse"}
    async with client.post("/v1/audio/speech", json=body) as response:
        raw = (await response.read()).decode()
    events = [json.loads(block[len("data: ") :]) for block in raw.split("\n\n") if block.strip()]
    data = b"".join(base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta")
    samples, rate = decode(data, "flac")
    assert (samples.size, rate) == (expected_samples(TEXT), RATE)


async def test_an_engine_failure_before_any_audio_is_an_openai_error(worker):
    client = await worker(ToneEngine(fail_on="boom"))
    with pytest.raises(openai.InternalServerError) as caught:
        await async_sdk(client).audio.speech.create(model="tts-1", input="boom", voice="default")
    assert caught.value.body["code"] == "EngineError"
    assert caught.value.body["type"] == "server_error"
