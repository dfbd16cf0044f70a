"""Reference voices on a Redis queue: a stored voice a job under way speaks with is not deleted (the job
is in Redis, not in the node's own queue), and an engine node checks the reference again before each
section, as a local worker does."""

from __future__ import annotations

import asyncio
import threading

from tests.openai_support import tone_wav
from tests.test_openai_voices import upload
from tests.test_path_safety import outside as outside  # a fixture: a folder beside tmp_path
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_a_voice_a_job_in_redis_speaks_with_is_not_deleted(worker, redis_server):
    """With --queue redis the delete looked only at the node's own (empty) queue: it removed the voice
    of a job under way, whose remaining sections then had no reference."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, queue=redis_server.url)
    assert (await upload(client, "teacher", tone_wav())).status == 201
    sections = [{"idx": i, "text": f"슬라이드 {i}."} for i in range(3)]
    async with client.post("/synth_batch?async=1", json={"sections": sections, "ref_wav": "teacher"}) as r:
        job_id = (await r.json())["job_id"]
    try:
        async with client.delete("/v1/audio/voices/teacher") as response:
            answer = await response.json()
    finally:
        engine.gate.set()
    assert response.status == 409 and answer["error"]["code"] == "VoiceInUse", answer
    assert job_id in answer["error"]["message"] and "/" not in answer["error"]["message"]
    async with asyncio.timeout(seconds(10)):
        while (status := await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != "done":
            await asyncio.sleep(0.02)
    assert status["ok"] == 3 and status["fail"] == 0
    async with client.delete("/v1/audio/voices/teacher") as response:
        assert response.status == 200  # the job has ended: the voice is free
