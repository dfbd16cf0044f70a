"""POST /v1/audio/speech through the official `openai` SDK against a worker on a real socket."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import io
import json
import struct
import wave

import numpy as np
import openai
import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine.base import EngineInfo
from npu_worker.errors import EngineError
from npu_worker.openai_compat.formats import available_formats
from tests.openai_support import RATE, async_sdk, decode, expected_samples, sync_sdk
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

TEXT = "안녕하세요, 반갑습니다."


@pytest.mark.parametrize("fmt", ["wav", "pcm", "flac", "mp3", "opus"])
async def test_each_response_format_decodes_to_the_synthesised_length_and_rate(worker, fmt):
    assert fmt in available_formats(), "the bundled libsndfile encodes all five formats"
    client = await worker()
    sdk = async_sdk(client)
    response = await sdk.audio.speech.create(model="tts-1", input=TEXT, voice="default", response_format=fmt)
    samples, rate = decode(response.content, fmt)
    assert rate == RATE
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


@pytest.mark.parametrize("fmt", ["flac", "mp3"])
async def test_a_whole_file_format_answers_whole_or_as_an_error(worker, fmt):
    """flac and mp3 have no byte to send before the end, yet the headers went out with the first
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


async def test_models_lists_the_loaded_engine_and_the_aliases(worker):
    client = await worker()
    models = await async_sdk(client).models.list()
    ids = [model.id for model in models.data]
    assert ids[0] == "tone-test-1"
    assert {"tone", "tts-1", "tts-1-hd"} <= set(ids)


async def test_the_sdk_retrieves_a_served_model_and_a_404_names_the_others(worker):
    """`client.models.retrieve(...)` (GET /v1/models/{model}, which clients call to check a model)
    was an unknown endpoint."""
    client = await worker()
    sdk = async_sdk(client)
    model = await sdk.models.retrieve("tts-1")
    assert (model.id, model.object, model.owned_by) == ("tts-1", "model", "npu-worker")
    with pytest.raises(openai.NotFoundError) as caught:
        await sdk.models.retrieve("gpt-4o-mini-tts")
    error = caught.value.body
    assert error["param"] == "model" and error["type"] == "not_found_error" and "tts-1" in error["message"]


class FolderModelEngine(ToneEngine):
    @property
    def info(self) -> EngineInfo:  # as ZipVoice names its model: folder/decoder file
        return dataclasses.replace(super().info, model="zipvoice_distill/fm_decoder_int8.onnx")


async def test_a_model_id_with_a_slash_is_retrieved_written_plainly_or_encoded(worker):
    """ZipVoice's id holds a slash: `GET /v1/models/zipvoice_distill/fm_decoder_int8.onnx` was a 404
    "no such endpoint" (only the SDK's `%2F` reached the route)."""
    client = await worker(FolderModelEngine())
    model_id = "zipvoice_distill/fm_decoder_int8.onnx"
    assert (await async_sdk(client).models.retrieve(model_id)).id == model_id
    response = await client.get(f"/v1/models/{model_id}")
    assert response.status == 200, await response.text()
    assert (await response.json())["id"] == model_id
    unknown = await client.get("/v1/models/zipvoice_distill/other.onnx")
    assert unknown.status == 404 and (await unknown.json())["error"]["param"] == "model"


async def test_a_model_that_is_not_served_is_refused(worker):
    client = await worker()
    with pytest.raises(openai.BadRequestError) as caught:
        await async_sdk(client).audio.speech.create(model="gpt-4o-mini-tts", input=TEXT, voice="default")
    error = caught.value.body
    assert error["param"] == "model" and "tts-1" in error["message"]


async def test_batch_returns_base64_audio_per_item_with_per_item_errors(worker):
    engine = ToneEngine()
    client = await worker(engine)
    body = {
        "model": "tts-1",
        "response_format": "wav",
        "items": [
            {"input": "첫 번째."},
            {"input": "두 번째 문장.", "speed": 2.0, "response_format": "flac"},
            {"input": "   "},
            {"input": "네 번째.", "voice": "nobody"},
        ],
    }
    async with client.post("/v1/audio/speech/batch", json=body) as response:
        assert response.status == 200
        result = await response.json()
    assert (result["total"], result["succeeded"], result["failed"]) == (4, 2, 2)
    first, second, empty, unknown = result["results"]
    wav = base64.b64decode(first["audio_data"])
    samples, rate = decode(wav, "wav")
    assert (first["status"], samples.size, rate) == ("success", expected_samples("첫 번째."), RATE)
    with wave.open(io.BytesIO(wav)) as reader:  # a whole file: its header says its real length
        assert reader.getnframes() == samples.size
    samples, rate = decode(base64.b64decode(second["audio_data"]), "flac")
    assert (second["format"], samples.size) == ("flac", expected_samples("두 번째 문장.", 2.0))
    assert empty["status"] == "error" and empty["error"]["code"] == "EmptyText"
    assert unknown["status"] == "error" and unknown["error"]["param"] == "voice"
    assert [r["index"] for r in result["results"]] == [0, 1, 2, 3]


async def test_an_engine_failure_before_any_audio_is_an_openai_error(worker):
    client = await worker(ToneEngine(fail_on="boom"))
    with pytest.raises(openai.InternalServerError) as caught:
        await async_sdk(client).audio.speech.create(model="tts-1", input="boom", voice="default")
    assert caught.value.body["code"] == "EngineError"
    assert caught.value.body["type"] == "server_error"


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_caller_that_hangs_up_stops_the_synthesis(worker, stream_format):
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.02)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    text = "가" * 200  # 80 chunks of 50 ms, 1.6 s of engine time
    gate.allow(2)
    try:
        body = {"input": text, "response_format": "pcm", "stream_format": stream_format}
        response = await client.post("/v1/audio/speech", json=body)
        assert response.status == 200
        await response.content.readany()
        response.close()  # hang up mid-stream
        gate.open()
        await until(lambda: scheduler.jobs_running() == 0)
    finally:
        gate.open()
    assert gate.passed < 40


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_queued_request_whose_caller_hangs_up_is_never_made(worker, stream_format):
    """A hang-up was noticed only once the first chunk arrived: a request queued behind another, whose
    caller had already left, still cost the engine its first chunk (and a whole-file format all of it)."""
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    body = {"response_format": "pcm", "stream_format": stream_format}
    try:
        first = asyncio.ensure_future(client.post("/v1/audio/speech", json={**body, "input": "앞 " * 20}))
        await until(lambda: engine.calls)
        queued = asyncio.ensure_future(client.post("/v1/audio/speech", json={**body, "input": "뒤 " * 20}))
        await until(lambda: scheduler.jobs_running() >= 2)
        queued.cancel()  # the caller gives up while its request waits: its connection closes
        with contextlib.suppress(asyncio.CancelledError):
            await queued
        await until(lambda: scheduler.jobs_running() <= 1)
        gate.open()
        (await first).close()
        await until(lambda: scheduler.jobs_running() == 0)
    finally:
        gate.open()
    assert engine.calls == ["앞 " * 20], engine.calls


async def hang_up_after_two_chunks(client, gate: ChunkGate, path: str, body: dict) -> None:
    """POST `body` to `path`, give up (the connection closes) once the engine has made two chunks, then
    let the engine go and wait until the worker runs nothing."""
    scheduler = client.app[SCHEDULER_KEY]
    gate.allow(2)
    try:
        request = asyncio.ensure_future(client.post(path, json=body))
        await until(lambda: gate.passed >= 2)
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
        gate.open()
        await until(lambda: scheduler.jobs_running() == 0)
    finally:
        gate.open()


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_whole_file_answer_whose_caller_left_is_a_499_not_a_200(worker, stream_format):
    """A flac answer (written only when whole) whose caller hung up mid-synthesis was counted (access
    log, metrics) as a 200 with an empty body: the unstarted response was returned, and so sent."""
    from tests.test_metrics import scrape, value

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    body = {"input": "가" * 100, "response_format": "flac", "stream_format": stream_format}
    await hang_up_after_two_chunks(client, gate, "/v1/audio/speech", body)
    async with asyncio.timeout(seconds(10)):
        while True:
            samples = await scrape(client)
            counted = {
                status: value(
                    samples,
                    "npu_worker_http_requests_total",
                    method="POST",
                    route="/v1/audio/speech",
                    status=status,
                )
                for status in ("200", "499")
            }
            if any(counted.values()):
                break
            await asyncio.sleep(0.05)
    assert counted == {"200": 0, "499": 1}, counted


async def test_a_batch_item_that_is_a_string_is_not_read_as_json(worker):
    """A string item was decoded as a JSON document: `'{"input": ...}'` was spoken (without the
    batch's defaults) and `"hello"` failed as `invalid JSON`."""
    client = await worker()
    items = [json.dumps({"input": "첫 번째."}), "hello", 5]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        result = await response.json()
    assert result["failed"] == 3, result
    messages = [item["error"]["message"] for item in result["results"]]
    assert messages == ["Expected `object`, got `str`"] * 2 + ["Expected `object`, got `int`"]


async def test_a_batch_whose_caller_hangs_up_stops_its_items(worker):
    """A batch's answer is written only at the end, so nothing noticed its caller leaving: every item
    was still made (an SDK that times out and retries doubled the engine's work each time)."""
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.02)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    items = [{"input": f"{n}번 " + "가" * 100} for n in range(4)]  # 40 chunks each
    await hang_up_after_two_chunks(client, gate, "/v1/audio/speech/batch", {"items": items})
    assert gate.passed < 40 and len(engine.calls) < len(items), (gate.passed, engine.calls)


async def test_a_batch_is_bounded_in_items_and_in_characters(worker):
    client = await worker()
    items = [{"input": "가"} for _ in range(65)]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 400
        assert (await response.json())["error"]["code"] == "TooManySections"
    items = [{"input": "가" * 1500} for _ in range(6)]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 400
        assert (await response.json())["error"]["param"] == "items"


async def test_a_download_far_longer_than_the_live_buffer_arrives_whole(worker):
    """A fast engine runs minutes ahead of the writer: a whole-text download is not a slow consumer."""
    engine = ToneEngine(seconds_per_char=0.2, chunk_seconds=0.5)
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    text = "가" * 1000  # 200 s of audio, far more than /ws's 30 s of unread audio
    async with client.post("/v1/audio/speech", json={"input": text, "response_format": "pcm"}) as response:
        first = await response.content.readany()
        async with asyncio.timeout(seconds(30)):
            while scheduler.jobs_running():  # the engine has made all of it while we did not read
                await asyncio.sleep(0.01)
        rest = await response.read()
    assert len(first + rest) == expected_samples(text, seconds_per_char=0.2) * 2 == 200 * RATE * 2


async def test_a_slow_speed_download_is_not_a_slow_consumer(worker, monkeypatch):
    """The unread-audio bound assumed 0.3 s of audio per character; at speed 0.25 a text makes four
    times that, so a long one, made fast and read at the listener's pace, was cut as a slow consumer.
    At a tenth of the scale (a 60 s floor, 200 characters a section): 10 times less audio to make."""
    from npu_worker.openai_compat import speech

    monkeypatch.setattr(speech, "DOWNLOAD_BUFFER_SECONDS", 60.0)
    engine = ToneEngine(seconds_per_char=0.2, chunk_seconds=0.5)
    client = await worker(engine, max_text_chars=200)
    scheduler = client.app[SCHEDULER_KEY]
    text = "가" * 100  # 80 s of audio at speed 0.25: more than the 60 s (0.3 s x 200) a download held
    body = {"input": text, "response_format": "pcm", "speed": 0.25}
    async with client.post("/v1/audio/speech", json=body) as response:
        first = await response.content.readany()
        async with asyncio.timeout(seconds(60)):
            while scheduler.jobs_running():
                await asyncio.sleep(0.01)
        rest = await response.read()
    assert len(first + rest) == expected_samples(text, 0.25, seconds_per_char=0.2) * 2


async def test_a_speech_start_cancelled_while_its_job_is_admitted_leaves_no_job_running(worker):
    """Admission may finish in a thread after the caller's task was cancelled (it hung up, its socket
    closed): the job it admits is cancelled, not run for nobody (only the stream socket did so before)."""
    import threading

    from npu_worker.openai_compat.core import start_speech
    from npu_worker.protocol import SynthParams

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    held = asyncio.ensure_future(start_speech(scheduler, "앞 글", SynthParams(lang="ko")))
    async with asyncio.timeout(seconds(10)):
        while not engine.calls:  # the engine is busy with the first text (held by the gate)
            await asyncio.sleep(0.01)
    admitting, release, admitted = threading.Event(), threading.Event(), threading.Event()
    admit = scheduler._admit

    def slow_admit(job, request):  # the admission thread, held until the caller has gone
        admitting.set()
        release.wait(seconds(10))
        admit(job, request)
        admitted.set()

    scheduler._admit = slow_admit
    scheduler.checks.langs.discard("ko")  # the admission goes to a thread
    starting = asyncio.ensure_future(start_speech(scheduler, "아무도 듣지 않는 글", SynthParams(lang="ko")))
    await until(admitting.is_set)
    starting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    release.set()
    await until(admitted.is_set)
    live = scheduler.admission.live_jobs
    await until(
        lambda: sum(not job.cancel_requested.is_set() for job in live()) == 1, "only the held run live"
    )
    gate.open()
    (await held).cancel()
    await until(lambda: scheduler.jobs_running() == 0)
    assert engine.calls == ["앞 글"], engine.calls
