"""Kept jobs on a worker that failed to start: told at once, and left on disk for a restart that loads.

A worker killed mid-batch and restarted with an engine that does not load (`--model-dir` gone) said 500
`fail` on /health, yet polled its job `interrupted` (a 202 result) and sent a re-attached stream
heartbeats, for ever: a job that would never run, with nothing telling the caller.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.protocol import ModelLoadError
from npu_worker.voices import UploadLimits, VoiceLibrary
from tests.openai_support import tone_wav
from tests.test_job_retention import wait_done, write_job
from tests.timing import seconds
from tests.tone_engine import ToneEngine


class FailingLoad(ToneEngine):
    """A tone engine whose load fails (after `gate`, when one is given), as ZipVoice's does without its
    model directory."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.gate = gate

    def load(self) -> None:
        if self.gate is not None:
            self.gate.wait(seconds(30))
        raise ModelLoadError("model directory /nowhere does not exist", fallback="cpu")


async def read_kept_jobs(client, path: str) -> None:
    """Until the kept jobs are read (`Loading` before): the engine's failure may come first."""
    async with asyncio.timeout(seconds(30)):
        while (response := await client.get(path)).status == 503:
            assert (await response.json())["error"].startswith("Loading: ")
            await asyncio.sleep(0.02)
        response.release()


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


async def test_a_kept_job_on_a_worker_whose_engine_failed_is_refused_as_health_is_and_resumes_later(
    worker, settings
):
    state = Path(settings.state_dir)
    job_id = write_job(state, time.time(), ["첫 문장.", "둘째 문장."])
    before = folder_bytes(state / "jobs" / job_id)
    client = await worker(FailingLoad())
    await read_kept_jobs(client, "/jobs")
    failure = {
        "status": "fail",
        "error": "ModelLoadError: model directory /nowhere does not exist",
        "traceback": None,
        "fallback": "cpu",
    }
    for path in (f"/jobs/{job_id}/status", f"/jobs/{job_id}/result", f"/jobs/{job_id}/events?after=1"):
        async with client.get(path) as response:
            assert (response.status, await response.json()) == (500, failure), path
    batch = {"sections": [{"idx": 0, "text": "새 작업."}]}
    async with client.post("/synth_batch?async=1", json=batch) as response:
        assert (response.status, await response.json()) == (500, failure)
    listed = await (await client.get("/jobs")).json()
    assert [(j["job_id"], j["status"]) for j in listed["jobs"]] == [(job_id, "interrupted")]
    await client.close()
    assert folder_bytes(state / "jobs" / job_id) == before  # nothing lost: the next start resumes it

    client = await worker()
    done = await wait_done(client, job_id)
    assert (done["event"], done["ok_count"], done["cancelled"]) == ("done", 2, False)


async def test_a_stream_open_when_the_engine_fails_ends_and_its_reattach_is_refused(worker, settings):
    """The kept jobs are read while the engine loads (minutes on a first QNN start): a stream opened
    then must not outlive the failure with heartbeats."""
    state = Path(settings.state_dir)
    job_id = write_job(state, time.time(), ["문장."])
    gate = threading.Event()
    client = await worker(FailingLoad(gate), wait_loaded=False, heartbeat_interval=0.2)
    await read_kept_jobs(client, "/jobs")
    async with asyncio.timeout(seconds(30)):
        response = await client.get(f"/jobs/{job_id}/events")
        assert response.status == 200
        first = json.loads(await response.content.readline())
        assert (first["event"], first["seq"]) == ("start", 1)
        gate.set()
        rest = [json.loads(line) async for line in response.content if line.strip()]
    assert {line["event"] for line in rest} <= {"heartbeat"}  # ended, without a `done`
    async with client.get(f"/jobs/{job_id}/events?after=1") as again:
        assert again.status == 500
        assert (await again.json())["error"].startswith("ModelLoadError: ")


async def test_kept_jobs_that_could_not_be_read_are_not_answered_as_unknown(worker, settings, monkeypatch):
    """The jobs folder could not be listed (a disk error): a kept job's lookup was a 404 `JobNotFound`,
    which tells a caller to send it again, and `GET /jobs` an empty list; both say what /health says."""
    from npu_worker.jobs.store import JobStore

    state = Path(settings.state_dir)
    job_id = write_job(state, time.time(), ["문장."])

    def failing(self, progress=None):
        raise OSError(5, "Input/output error", str(self.root))

    monkeypatch.setattr(JobStore, "load_all", failing)
    client = await worker()
    for path in (f"/jobs/{job_id}/status", f"/jobs/{job_id}/events", "/jobs"):
        async with client.get(path) as response:
            body = await response.json()
            assert response.status == 503, (path, body)
            assert body["error"].startswith("StateUnavailable: the kept jobs could not be read"), path


async def test_a_voice_is_not_deleted_when_the_kept_jobs_that_may_use_it_could_not_be_read(
    worker, settings, monkeypatch
):
    """With the kept jobs unread, no job was found speaking with the voice: it was deleted, and a
    restart that could read them failed the interrupted job's remaining sections."""
    from npu_worker.jobs.store import JobStore

    state = Path(settings.state_dir)
    library = VoiceLibrary(state / "voices")
    limits = UploadLimits(max_bytes=5 << 20, max_seconds=30.0)
    voice = await asyncio.to_thread(library.add, "teacher", tone_wav(), "안녕하세요", limits)
    write_job(state, time.time(), ["재개."], params={"ref_wav": voice.wav_path, "ref_text": "안녕하세요"})

    def failing(self, progress=None):
        raise OSError(5, "Input/output error", str(self.root))

    monkeypatch.setattr(JobStore, "load_all", failing)
    client = await worker()
    async with client.delete("/v1/audio/voices/teacher") as response:
        error = (await response.json())["error"]
        assert (response.status, error["code"]) == (503, "StateUnavailable"), error
    assert Path(voice.wav_path).is_file()


async def test_a_kept_job_of_a_worker_whose_engine_failed_may_still_be_cancelled(worker, settings):
    """Its caller may give it up rather than wait for a restart that loads: it then ends `cancelled`."""
    job_id = write_job(Path(settings.state_dir), time.time(), ["문장."])
    client = await worker(FailingLoad())
    await read_kept_jobs(client, "/jobs")
    async with client.delete(f"/jobs/{job_id}") as response:
        body = await response.json()
        assert (response.status, body["cancel_requested"]) == (200, True), body
    status = await (await client.get(f"/jobs/{job_id}/status")).json()
    assert status["status"] == "cancelled"


class LoadStoppedByShutdown(ToneEngine):
    """A load that waits on something outside until a shutdown gives it up (`cancel_load`), as
    sovits's waits for its upstream: it then ends with ModelLoadError, yet nothing failed."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped = threading.Event()

    def load(self) -> None:
        self.stopped.wait(seconds(30))
        raise ModelLoadError("stopped waiting for the upstream (the engine was closed)")

    def cancel_load(self) -> None:
        self.stopped.set()


async def test_a_load_stopped_by_the_shutdown_is_no_failure_for_kept_jobs_or_health(worker, settings):
    """A worker told to stop (a restart) while its engine still loads: a kept job's poll said 500
    `ModelLoadError` and /health 500 `fail`, so a client gave the job up (`EngineFailed`) while it
    resumes at the next start."""
    job_id = write_job(Path(settings.state_dir), time.time(), ["문장."])
    client = await worker(LoadStoppedByShutdown(), wait_loaded=False)
    await read_kept_jobs(client, "/jobs")
    scheduler = client.app[SCHEDULER_KEY]
    await scheduler.drain(0.1)  # the shutdown's first step: it gives the load up
    async with asyncio.timeout(seconds(30)):
        while scheduler.runner.alive:
            await asyncio.sleep(0.01)
    async with client.get(f"/jobs/{job_id}/status") as response:
        assert (response.status, (await response.json())["status"]) == (200, "interrupted")
    async with client.get("/health") as response:
        health = await response.json()
        assert (response.status, health["status"]) == (503, "loading"), health


async def test_ready_says_the_kept_jobs_could_not_be_read_not_that_the_engine_failed(worker, monkeypatch):
    """/ready said `the engine failed to load: StateUnavailable: the kept jobs could not be read…` of an
    engine that had loaded; it says the worker cannot serve, and why. (The jobs folder's listing fails
    as a disk's I/O error would, which a test running as root cannot cause for real.)"""
    from npu_worker.jobs.store import JobStore

    def failing(self, progress=None):
        raise OSError(5, "Input/output error", str(self.root))

    monkeypatch.setattr(JobStore, "load_all", failing)
    client = await worker()
    scheduler = client.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(10)):
        while scheduler.load_error is None:  # (no event: the recovery sets it as it ends)
            await asyncio.sleep(0.01)
        async with client.get("/ready") as response:
            body = await response.json()
    assert response.status == 503 and "Retry-After" not in response.headers, body  # waiting does not help
    assert body["reason"].startswith("the worker cannot serve: StateUnavailable: the kept jobs could not"), (
        body
    )
    assert "engine" not in body["reason"], body
