"""A stored voice a job still speaks with cannot be deleted from under it (nor replaced by a new upload
under its name): the job's remaining sections would fail, or speak the new audio with the old words."""

from __future__ import annotations

import asyncio
import threading

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.protocol import VoiceInUse
from npu_worker.voices import UploadLimits, VoiceLibrary
from tests.openai_support import tone_wav
from tests.test_openai_voices import upload
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_a_voice_a_queued_or_running_job_speaks_with_is_not_deleted(worker):
    """Deleted after two of eight sections, the other six failed with EngineError (the stored wav's
    path in the message); uploaded again meanwhile, they spoke the new audio with the old transcript."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    assert (await upload(client, "teacher", tone_wav())).status == 201
    sections = [{"idx": i, "text": f"슬라이드 {i}."} for i in range(3)]
    async with client.post("/synth_batch?async=1", json={"sections": sections, "ref_wav": "teacher"}) as r:
        job_id = (await r.json())["job_id"]
    async with client.delete("/v1/audio/voices/teacher") as response:
        error = (await response.json())["error"]
        assert response.status == 409 and error["code"] == "VoiceInUse", error
        assert job_id in error["message"] and "/" not in error["message"]
    assert (await upload(client, "teacher", tone_wav(seconds_long=3.0))).status == 409
    engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        while (status := await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != "done":
            await asyncio.sleep(0.02)
    assert status["ok"] == 3 and status["fail"] == 0
    async with client.delete("/v1/audio/voices/teacher") as response:
        assert response.status == 200  # the job has ended: the voice is free
    scheduler = client.app[SCHEDULER_KEY]
    assert await asyncio.to_thread(scheduler.voices.find, "teacher") is None


@pytest.mark.allow_blocking
def test_a_voice_named_by_a_job_being_admitted_is_not_deleted(tmp_path):
    """Between the name's lookup and the job's queueing nothing lists the job yet: a delete then left
    it a wav that was gone."""
    library = VoiceLibrary(tmp_path / "voices")
    library.add("teacher", tone_wav(), "안녕하세요", UploadLimits(max_bytes=5 << 20, max_seconds=30.0))
    with library.admitting("teacher"), pytest.raises(VoiceInUse, match="a job being queued"):
        library.delete("teacher")
    library.delete("teacher")
    assert library.find("teacher") is None
