"""GET /v1/models and /v1/models/{model}, and the `model` every speech request names."""

from __future__ import annotations

import dataclasses

import openai
import pytest

from npu_worker.engine.base import EngineInfo
from tests.openai_support import TEXT, async_sdk
from tests.tone_engine import ToneEngine


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
