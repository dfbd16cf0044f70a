"""A request that arrives once shutdown began: a 429 `QueueFull` with `Retry-After: 5` (a restarted
worker takes it), as docs/protocol.md's row and `/ready` say, on a Redis node as on a local one."""

from __future__ import annotations

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.timing import seconds

# One wording for every shutdown refusal: this 429 said `the worker is shutting down` alone, the drain's
# `...; send the request again`, an open utterance `...; send the text again once it is back`.
SHUTTING_DOWN = "the worker is shutting down; send the request again once it is back"


@pytest.fixture(params=["local", "redis"])
async def draining(request, worker):
    """A worker (local queue, or a `both` node on a real Redis) whose shutdown has begun."""
    overrides = {}
    if request.param == "redis":
        overrides["queue"] = request.getfixturevalue("redis_server").url
    client = await worker(**overrides)
    await client.app[SCHEDULER_KEY].drain(grace=seconds(1))
    return client


async def test_a_request_while_the_worker_drains_is_a_queue_full_as_ready_says(draining, tmp_path):
    """A Redis node answered 503 `Loading` (`Retry-After: 1`) while its `/ready` said 5, and a local
    worker's OpenAI batch was a 200 whose every item failed alike."""
    client = draining
    ready = await client.get("/ready")
    assert (ready.status, ready.headers["Retry-After"]) == (503, "5")
    synth = await client.post("/synth", json={"text": "가", "output_path": str(tmp_path / "a.wav")})
    assert (synth.status, synth.headers.get("Retry-After")) == (429, "5")
    assert (await synth.json())["error"] == f"QueueFull: {SHUTTING_DOWN}"
    speech = await client.post("/v1/audio/speech", json={"input": "가", "response_format": "wav"})
    assert (speech.status, speech.headers.get("Retry-After")) == (429, "5")
    error = (await speech.json())["error"]
    assert (error["code"], error["message"], error["type"]) == (
        "QueueFull",
        SHUTTING_DOWN,
        "rate_limit_error",
    )
    batch = await client.post("/v1/audio/speech/batch", json={"items": [{"input": "가"}, {"input": "나"}]})
    assert (batch.status, batch.headers.get("Retry-After")) == (429, "5")
    assert (await batch.json())["error"]["code"] == "QueueFull"
