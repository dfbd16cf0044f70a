"""Every answer of the OpenAI routes carries `x-request-id`, as OpenAI's API does: a speech request's
is its job's id, any other a `req_` id of its own, so an SDK's `request_id` (on a response and on an
error) names what the worker's log names. No answer had one: the SDK's `request_id` was None."""

from __future__ import annotations

import re

import openai
import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.openai_support import TEXT, async_sdk
from tests.test_ws_support import ChunkGate
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")

OWN_ID = re.compile(r"req_[0-9a-f]{16}")


async def test_a_speech_answer_is_named_by_its_job_id_while_the_job_runs(worker):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    sdk = async_sdk(client)
    gate.allow(2)
    try:
        for stream_format in ("audio", "sse"):
            async with sdk.audio.speech.with_streaming_response.create(
                model="tts-1",
                input="가" * 40,
                voice="default",
                response_format="pcm",
                stream_format=stream_format,
            ) as response:
                job_id = response.request_id
                assert job_id is not None and re.fullmatch(r"[0-9a-f]{16}", job_id), job_id
                assert client.app[SCHEDULER_KEY].live_job(job_id) is not None  # the job of this answer
                gate.open()
                await response.read()
            gate = ChunkGate()
            engine.gate = gate
            gate.allow(2)
    finally:
        gate.open()


async def test_a_refusal_has_its_own_id_and_the_sdk_error_says_it(worker):
    client = await worker()
    sdk = async_sdk(client)
    seen = set()
    for _ in range(2):
        with pytest.raises(openai.BadRequestError) as refused:
            await sdk.audio.speech.create(model="tts-1", input=TEXT, voice="nobody-by-this-name")
        assert refused.value.request_id is not None and OWN_ID.fullmatch(refused.value.request_id)
        seen.add(refused.value.request_id)
    assert len(seen) == 2  # one per request


async def test_an_engine_failure_after_the_job_began_names_that_job(worker):
    """A failure before any byte is an error response: its id is the job's (the log's words)."""

    client = await worker(ToneEngine(fail_on="boom"))
    with pytest.raises(openai.InternalServerError) as caught:
        await async_sdk(client).audio.speech.create(model="tts-1", input="boom", voice="default")
    assert caught.value.request_id is not None
    assert re.fullmatch(r"[0-9a-f]{16}", caught.value.request_id), caught.value.request_id


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/models", None),
        ("GET", "/v1/audio/voices", None),
        ("DELETE", "/v1/audio/voices/nobody", None),
        ("POST", "/v1/audio/speech/batch", {"items": [{"input": TEXT}], "response_format": "wav"}),
        ("POST", "/v1/audio/speech/batch", {"items": "not a list"}),
    ],
)
async def test_the_other_routes_answer_with_an_id_of_their_own(worker, method, path, body):
    client = await worker()
    async with client.request(method, path, json=body) as response:
        await response.read()
        assert OWN_ID.fullmatch(response.headers.get("x-request-id", "")), (response.status, path)
