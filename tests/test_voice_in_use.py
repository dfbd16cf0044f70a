"""A stored voice a job still speaks with cannot be deleted from under it (nor replaced by a new upload
under its name): the job's remaining sections would fail, or speak the new audio with the old words."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import threading
import time
from pathlib import Path

import aiohttp
import pytest
import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.openai_compat.load_wait import LOAD_WAITERS_KEY
from npu_worker.protocol import VoiceInUse
from npu_worker.voices import UploadLimits, VoiceLibrary
from tests.openai_support import tone_wav
from tests.test_job_retention import write_job
from tests.test_openai_stream_ws import receive, stream_url
from tests.test_openai_voices import upload
from tests.test_start_up_recovery import serve_holding_the_reading
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

LIMITS = UploadLimits(max_bytes=5 << 20, max_seconds=30.0)


async def a_batch_speaking_as_teacher(client) -> str:
    """Uploads the voice `teacher` and queues a 3-section batch that speaks with it; its job id."""
    assert (await upload(client, "teacher", tone_wav())).status == 201
    sections = [{"idx": i, "text": f"슬라이드 {i}."} for i in range(3)]
    async with client.post("/synth_batch?async=1", json={"sections": sections, "ref_wav": "teacher"}) as r:
        job_id = (await r.json())["job_id"]
    return job_id


async def the_voice_is_free_once_the_batch_ends(client, job_id: str) -> None:
    async with asyncio.timeout(seconds(10)):
        while (status := await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != "done":
            await asyncio.sleep(0.02)
    assert status["ok"] == 3 and status["fail"] == 0
    async with client.delete("/v1/audio/voices/teacher") as response:
        assert response.status == 200  # the job has ended: the voice is free


async def test_a_voice_a_queued_or_running_job_speaks_with_is_not_deleted(worker):
    """Deleted after two of eight sections, the other six failed with EngineError (the stored wav's
    path in the message); uploaded again meanwhile, they spoke the new audio with the old transcript."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    job_id = await a_batch_speaking_as_teacher(client)
    async with client.delete("/v1/audio/voices/teacher") as response:
        error = (await response.json())["error"]
        assert response.status == 409 and error["code"] == "VoiceInUse", error
        assert job_id in error["message"] and "/" not in error["message"]
    assert (await upload(client, "teacher", tone_wav(seconds_long=3.0))).status == 409
    engine.gate.set()
    await the_voice_is_free_once_the_batch_ends(client, job_id)
    scheduler = client.app[SCHEDULER_KEY]
    assert await asyncio.to_thread(scheduler.voices.find, "teacher") is None


async def test_a_speech_request_in_progress_keeps_its_voice_and_its_id(worker):
    """A preview is not listed by /jobs: its id in the refusal would let any caller cancel it."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    assert (await upload(client, "teacher", tone_wav())).status == 201
    speech = {"model": "tts-1", "input": "안녕.", "voice": "teacher", "response_format": "pcm"}
    answer = asyncio.create_task(client.post("/v1/audio/speech", json=speech))
    try:
        await until(lambda: engine.requests, "the request running")
        async with client.delete("/v1/audio/voices/teacher") as response:
            error = (await response.json())["error"]
            assert response.status == 409 and "in use by a request in progress" in error["message"]
            [job] = client.app[SCHEDULER_KEY].admission.live_jobs()  # its id is nowhere to be read
            assert job.id not in error["message"]
    finally:
        engine.gate.set()
    async with await answer as response:
        assert response.status == 200
    scheduler = client.app[SCHEDULER_KEY]
    await until(lambda: not scheduler.admission.live_jobs(), "the request's end")  # just after its answer
    async with client.delete("/v1/audio/voices/teacher") as response:
        assert response.status == 200


@pytest.mark.allow_blocking
def test_a_voice_named_by_a_job_being_admitted_is_not_deleted(tmp_path):
    """Between the name's lookup and the job's queueing nothing lists the job yet: a delete then left
    it a wav that was gone."""
    library = VoiceLibrary(tmp_path / "voices")
    library.add("teacher", tone_wav(), "안녕하세요", LIMITS)
    with library.admitting("teacher"), pytest.raises(VoiceInUse, match="a job being queued"):
        library.delete("teacher")
    library.delete("teacher")
    assert library.find("teacher") is None


async def test_a_voice_is_not_deleted_while_the_kept_jobs_that_may_use_it_are_read(settings):
    """At start-up the interrupted jobs are read while the socket serves: a delete then found no job
    using the voice, and the job resumed without it. Since the OpenAI routes wait for the load (the
    kept jobs' reading is part of it), the delete waits for the reading and is refused, 409, naming
    the kept job that speaks with the voice."""
    state = Path(settings.state_dir)
    library = VoiceLibrary(state / "voices")
    voice = await asyncio.to_thread(library.add, "teacher", tone_wav(), "안녕하세요", LIMITS)
    params = {"ref_wav": voice.wav_path, "ref_text": "안녕하세요"}
    interrupted = write_job(state, time.time() - 500, ["재개."], params=params)
    engine = ToneEngine()
    engine.gate = threading.Event()  # the resumed job stays running
    scheduler, listener, gate, reached = await serve_holding_the_reading(settings, engine)
    url = f"http://127.0.0.1:{listener.port}/v1/audio/voices/teacher"
    try:
        async with aiohttp.ClientSession() as http:
            await asyncio.to_thread(reached.wait, seconds(30))
            waiters = listener.runner.app[LOAD_WAITERS_KEY]
            deleting = asyncio.ensure_future(http.delete(url))
            await until(lambda: waiters.waiting == 1, "the delete waiting for the kept jobs' reading")
            assert not deleting.done()
            gate.set()
            async with await deleting as response:
                error = (await response.json())["error"]
                assert response.status == 409 and interrupted in error["message"], error
            await until(lambda: not scheduler.recovery.running, "the end of start-up")
            async with http.delete(url) as response:
                error = (await response.json())["error"]
                assert response.status == 409 and interrupted in error["message"], error
    finally:
        gate.set()
        engine.gate.set()
        await listener.close()


async def test_an_inline_voice_a_queued_job_speaks_with_is_not_pruned(worker, settings):
    """Past 2 minutes an inline voice counted as unused once 32 newer ones came (a stream socket's
    session.config stores one each): a job still queued with it then failed to read its wav."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    audio = "data:audio/wav;base64," + base64.b64encode(tone_wav()).decode()
    speech = {
        "model": "tts-1",
        "input": "안녕.",
        "ref_audio": audio,
        "ref_text": "하나",
        "response_format": "pcm",
    }
    answer = asyncio.create_task(client.post("/v1/audio/speech", json=speech))
    try:
        inline = Path(settings.state_dir) / "voices" / "inline"
        await until(lambda: engine.requests, "the job running")
        [transcript] = await asyncio.to_thread(lambda: list(inline.glob("*.txt")))
        await asyncio.to_thread(os.utime, transcript, (time.time() - 600,) * 2)  # stored ten minutes ago
        async with websockets.connect(stream_url(client)) as ws:
            for n in range(40):  # newer inline voices, each of its own audio
                other = base64.b64encode(tone_wav(seconds_long=1.0 + n / 100)).decode()
                config = {
                    "type": "session.config",
                    "ref_audio": f"data:audio/wav;base64,{other}",
                    "ref_text": "둘",
                }
                await ws.send(json.dumps(config))
                assert (await receive(ws))["type"] == "session.configured"
        assert await asyncio.to_thread(transcript.with_suffix(".wav").exists)
    finally:
        engine.gate.set()
    async with await answer as response:
        assert response.status == 200 and len(await response.read()) > 0
