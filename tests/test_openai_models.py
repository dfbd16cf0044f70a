"""GET /v1/models and /v1/models/{model}, and the `model` every speech request names."""

from __future__ import annotations

import dataclasses

import openai
import pytest

from npu_worker.engine.base import EngineInfo
from tests.openai_support import TEXT, async_sdk, expected_samples
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


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
        await sdk.models.retrieve("whisper-1")
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
        await async_sdk(client).audio.speech.create(model="whisper-1", input=TEXT, voice="default")
    error = caught.value.body
    assert error["param"] == "model" and "tts-1" in error["message"]


@pytest.mark.parametrize(
    "model", ["gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-12-15", "gpt-4o-mini-tts-2025-03-20"]
)
async def test_the_models_openais_guide_names_for_instructions_and_sse_are_served(worker, model):
    """OpenAI's text-to-speech guide streams SSE and sends `instructions` only with `gpt-4o-mini-tts`
    (its SDK lists it beside its dated snapshots; `sse` "is not supported for tts-1"): such a client
    got a 400 for its `model` on every request, although `tts-1` and every built-in voice name work."""
    engine = ToneEngine()
    client = await worker(engine)
    sdk = async_sdk(client)
    assert model in [listed.id for listed in (await sdk.models.list()).data]
    assert (await sdk.models.retrieve(model)).id == model
    response = await sdk.audio.speech.create(
        model=model, input=TEXT, voice="coral", response_format="pcm", instructions="Speak cheerfully."
    )
    assert len(response.content) // 2 == expected_samples(TEXT)
    body = {"model": model, "input": TEXT, "voice": "coral", "stream_format": "sse", "response_format": "pcm"}
    async with client.post("/v1/audio/speech", json=body) as streamed:
        assert streamed.status == 200, await streamed.text()
        assert (
            (await streamed.read())
            .rstrip()
            .splitlines()[-1]
            .startswith(b'data: {"type": "speech.audio.done"')
        )
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_json({"type": "session.config", "model": model})
        assert (await ws.receive_json(timeout=seconds(5)))["type"] == "session.configured"
