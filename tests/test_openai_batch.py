"""POST /v1/audio/speech/batch: each item's audio or its own error, the batch's bounds, a caller gone."""

from __future__ import annotations

import base64
import io
import json
import wave

from tests.openai_support import RATE, decode, expected_samples, hang_up_after_two_chunks
from tests.test_ws_support import ChunkGate
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
