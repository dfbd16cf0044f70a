"""POST /v1/audio/speech/batch: each item's audio or its own error, the batch's bounds, a caller gone."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import threading
import tracemalloc
import wave

from aiohttp.payload import BytesIOPayload

from npu_worker.app_keys import BODY_BUDGET_KEY, DECODE_SLOTS_KEY, SCHEDULER_KEY
from tests.openai_support import RATE, decode, expected_samples, hang_up_after_two_chunks, tone_wav
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


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


async def test_a_batch_item_that_is_a_string_is_not_read_as_json(worker):
    """A string item was decoded as a JSON document: `'{"input": ...}'` was spoken (without the
    batch's defaults) and `"hello"` failed as `invalid JSON`. A refused item's error named neither
    the item nor the field (`param` null), as every other refusal of a body's shape does."""
    client = await worker()
    items = [json.dumps({"input": "첫 번째."}), "hello", 5]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        result = await response.json()
    assert result["failed"] == 3, result
    errors = [(item["error"]["message"], item["error"]["param"]) for item in result["results"]]
    assert errors == [
        ("Expected `object`, got `str` - at `$.items[0]`", "items"),
        ("Expected `object`, got `str` - at `$.items[1]`", "items"),
        ("Expected `object`, got `int` - at `$.items[2]`", "items"),
    ]


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


async def test_a_batch_over_a_lower_queue_bound_is_told_which_setting_bounds_it(worker):
    """With `--max-queue 2` a batch of 3 items was told "3 items, the limit is 2", where the docs
    said 64 and nothing named the queue's bound."""
    client = await worker(max_queue=2)
    items = [{"input": "가"} for _ in range(3)]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 400
        error = (await response.json())["error"]
    assert (error["code"], error["param"]) == ("TooManySections", "items")
    assert error["message"].startswith("3 items, the limit is 2 (--max-queue")
    async with client.post("/v1/audio/speech/batch", json={"items": items[:2]}) as response:
        assert response.status == 200
        assert (await response.json())["succeeded"] == 2


async def test_a_queue_bound_equal_to_max_sections_is_named_as_the_v1_batch_names_it(worker):
    """The two batch routes each worded the bound: at `--max-queue 2 --max-sections 2` the OpenAI
    batch named --max-queue, /synth_batch --max-sections."""
    client = await worker(max_queue=2, max_sections=2)
    async with client.post("/v1/audio/speech/batch", json={"items": [{"input": "가"}] * 3}) as response:
        assert response.status == 400
        assert (await response.json())["error"]["message"] == "3 items, the limit is 2 (--max-sections)"
    async with client.post("/synth_batch", json={"sections": [{"text": "가"}] * 3}) as response:
        assert response.status == 400
        assert (await response.json())[
            "error"
        ] == "TooManySections: 3 sections, the limit is 2 (--max-sections)"


async def test_an_item_whose_format_the_engines_rate_cannot_take_is_its_own_error(worker):
    """An engine at 22 050 Hz: libsndfile cannot encode opus at that rate. That was a RuntimeError, no
    WorkerError: first the whole batch's 500, then the item's InternalError; now it is that item's
    UnsupportedFormat, refused before it is spoken, and the other item is made."""
    engine = ToneEngine(sample_rate=22050, chunk_seconds=0.05, delay_per_chunk=0.01)
    client = await worker(engine)
    items = [{"input": "가", "response_format": "opus"}, {"input": "나" * 40, "response_format": "wav"}]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 200, await response.text()
        result = await response.json()
        running = client.app[SCHEDULER_KEY].jobs_running()
    assert running == 0
    failed, made = result["results"]
    assert failed["status"] == "error" and failed["error"]["code"] == "UnsupportedFormat", failed
    assert failed["error"]["param"] == "response_format" and "22050 Hz" in failed["error"]["message"]
    samples, rate = decode(base64.b64decode(made["audio_data"]), "wav")
    assert (made["status"], rate, samples.size) == ("success", 22050, 40 * 441)
    assert (result["succeeded"], result["failed"]) == (1, 1)


async def test_an_item_that_fails_unexpectedly_is_its_own_error_and_the_others_are_made(worker, monkeypatch):
    """A bug in one item (here: its encoding raises a RuntimeError, no WorkerError) ended the batch's
    gather: a 500 while the other items were still made for nobody. It is that item's InternalError
    now, and the other item is made."""
    from npu_worker.openai_compat import speech_batch

    real = speech_batch.encode_whole

    def encode_failing_flac(audio, sample_rate, fmt):
        if fmt.name == "flac":
            raise RuntimeError("a bug in the flac path")
        return real(audio, sample_rate, fmt)

    monkeypatch.setattr(speech_batch, "encode_whole", encode_failing_flac)
    client = await worker(ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01))
    items = [{"input": "가", "response_format": "flac"}, {"input": "나" * 40, "response_format": "wav"}]
    async with client.post("/v1/audio/speech/batch", json={"items": items}) as response:
        assert response.status == 200, await response.text()
        result = await response.json()
        running = client.app[SCHEDULER_KEY].jobs_running()
    assert running == 0
    failed, made = result["results"]
    assert failed["status"] == "error" and failed["error"]["code"] == "InternalError", failed
    assert "a bug in the flac path" not in json.dumps(failed)  # the incident id, never the bug's words
    assert made["status"] == "success" and (result["succeeded"], result["failed"]) == (1, 1)


def blocks_over(size: int) -> list[int]:
    return [trace.size for trace in tracemalloc.take_snapshot().traces if trace.size > size]


async def test_a_batch_keeps_an_items_inline_ref_audio_only_while_it_is_counted(worker):
    """The parsed batch (up to --max-body-bytes of base64 `ref_audio`, out of the body budget once
    read) was kept for the whole batch, and each item's decoded audio while it was spoken: while an
    item waits for a decode slot only its decoded audio is alive (counted in the budget), and
    once it is spoken neither is; nor is an item that failed at once (a 3 MB string)."""
    engine = ToneEngine()
    engine.gate = gate = ChunkGate()
    client = await worker(engine, voice_decodes=1, voice_decode_wait=seconds(30))
    audio = tone_wav(seconds_long=25.0, rate=48000)  # 2.4 MB; its base64 3.2 MB
    body = {
        "response_format": "wav",
        "ref_text": "참조",
        "items": [
            {"input": "하나.", "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode()},
            "x" * 3_000_000,  # no item (an error of its own) is kept either
        ],
    }
    slots, budget, go_on = client.app[DECODE_SLOTS_KEY], client.app[BODY_BUDGET_KEY], threading.Event()

    # Made before tracing starts (the worker's blocks are traced): a payload over a BytesIO, as aiohttp
    # wants a large body (raw bytes: a ResourceWarning), whose buffer it unshares, a copy, when made
    raw = BytesIOPayload(io.BytesIO(json.dumps(body).encode()), content_type="application/json")

    async def send() -> dict:
        async with client.post("/v1/audio/speech/batch", data=raw) as answer:
            return await answer.json()

    busy = asyncio.create_task(slots.run(go_on.wait, seconds(30), holding=0))
    tracemalloc.start(1)
    try:
        await asyncio.sleep(0.05)  # (the app's one decode slot is taken)
        request = asyncio.create_task(send())
        await until(lambda: budget.held == len(audio), "the item waiting for a decode slot")
        waiting = blocks_over(len(audio) // 2)
        go_on.set()
        await until(lambda: engine.calls, "the item being spoken")  # (the gate holds its first chunk)
        await until(lambda: not blocks_over(len(audio) // 2), "the item's audio let go while it is spoken")
        gate.open()
        result = await request
    finally:
        tracemalloc.stop()
        go_on.set()
        gate.open()
        await busy
    assert len(waiting) == 1 and len(audio) <= waiting[0] < len(audio) + 1024, waiting  # the decoded audio
    assert result["succeeded"] == 1, result
