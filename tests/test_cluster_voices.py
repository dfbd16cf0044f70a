"""Reference voices on a Redis queue: a stored voice a job under way speaks with is not deleted (the job
is in Redis, not in the node's own queue), and an engine node checks the reference again before each
section, as a local worker does."""

from __future__ import annotations

import threading

from tests.test_path_safety import outside as outside  # a fixture: a folder beside tmp_path
from tests.test_voice_in_use import a_batch_speaking_as_teacher, the_voice_is_free_once_the_batch_ends
from tests.tone_engine import ToneEngine


async def test_a_voice_a_job_in_redis_speaks_with_is_not_deleted(worker, redis_server):
    """With --queue redis the delete looked only at the node's own (empty) queue: it removed the voice
    of a job under way, whose remaining sections then had no reference."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, queue=redis_server.url)
    job_id = await a_batch_speaking_as_teacher(client)
    try:
        async with client.delete("/v1/audio/voices/teacher") as response:
            answer = await response.json()
    finally:
        engine.gate.set()
    assert response.status == 409 and answer["error"]["code"] == "VoiceInUse", answer
    assert job_id in answer["error"]["message"] and "/" not in answer["error"]["message"]
    await the_voice_is_free_once_the_batch_ends(client, job_id)
