"""Start-up with many kept jobs: the socket serves while they are read (jobs/recovery.py).

The reading is held at its first job by a gate in its progress hook, so the test sees the worker in the
middle of it without racing a clock."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

import aiohttp

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.scheduler import Scheduler
from npu_worker.openai_compat import load_wait
from npu_worker.server import listen
from tests.test_job_retention import write_job
from tests.timing import seconds
from tests.tone_engine import ToneEngine


def hold_the_reading(
    scheduler: Scheduler, gate: threading.Event | None = None
) -> tuple[threading.Event, threading.Event]:
    """Hold the start-up reading at its first job until `gate` is set (a new one if None); `reached` is
    set once it is held there. Returns (gate, reached)."""
    gate, reached = gate or threading.Event(), threading.Event()
    progress = scheduler.recovery.progress

    def held(done: int, total: int) -> None:
        progress(done, total)
        reached.set()
        gate.wait(seconds(30))

    scheduler.recovery.progress = held
    return gate, reached


class HeldStart(NamedTuple):
    scheduler: Scheduler
    listener: Any
    gate: threading.Event
    reached: threading.Event


async def serve_holding_the_reading(settings: Any, engine: Any, stop_gate: bool = False) -> HeldStart:
    """A worker serving on a free port whose start-up reading is held at its first job (`hold_the_reading`;
    `stop_gate`: released only by the worker's own stop)."""
    app = await asyncio.to_thread(build_app, settings, engine)
    scheduler = app[SCHEDULER_KEY]
    gate, reached = hold_the_reading(scheduler, scheduler.recovery.stop if stop_gate else None)
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    return HeldStart(scheduler, listener, gate, reached)


async def test_the_socket_serves_while_the_kept_jobs_are_read(settings, monkeypatch):
    # The speech route's answer past its wait for the load (tests/test_openai_load_wait.py's subject): at
    # 30 s, the test waited that long for it, as long as the gate holds the reading (`held`)
    monkeypatch.setattr(load_wait, "LOAD_WAIT_SECONDS", 0.0)
    state, now = Path(settings.state_dir), time.time()
    finished = [write_job(state, now - 100 + i, ["끝."], done=True) for i in range(3)]
    interrupted = write_job(state, now - 500, ["재개."])
    engine = ToneEngine()
    scheduler, listener, gate, reached = await serve_holding_the_reading(settings, engine)
    base = f"http://127.0.0.1:{listener.port}"
    try:
        async with aiohttp.ClientSession() as http:
            await asyncio.to_thread(reached.wait, seconds(30))
            async with asyncio.timeout(seconds(30)):  # the engine's own phase is shown while it loads
                while scheduler.runner.info is None:
                    await asyncio.sleep(0.01)
            async with http.get(f"{base}/health") as response:
                health = await response.json()
                assert response.status == 503
                assert (health["status"], health["loaded"]) == ("loading", False)
                assert health["load_phase"] == "reading the kept jobs (0 of 4)"
                # docs/protocol.md: what runs is still null, the engine's load time already known
                assert health["device"] is None and isinstance(health["load_seconds"], float), health
            async with http.get(f"{base}/ready") as response:
                assert response.status == 503
                assert (await response.json())[
                    "reason"
                ] == "the worker is still reading the kept jobs (0 of 4)"
            submit = {"sections": [{"idx": 0, "text": "새 작업."}], "lang": "ko"}
            for method, path, body in (
                ("GET", "/jobs", None),
                ("GET", f"/jobs/{finished[0]}/status", None),
                ("GET", f"/jobs/{interrupted}/events", None),
                ("DELETE", f"/jobs/{interrupted}", None),
                ("POST", "/synth_batch?async=1", submit),
            ):
                async with http.request(method, f"{base}{path}", json=body) as response:
                    error = (await response.json())["error"]
                    assert (response.status, response.headers.get("Retry-After")) == (503, "1"), path
                    assert error.startswith("Loading: the worker is still reading the kept jobs"), path
            speech = {"model": "tts-1", "input": "안녕.", "voice": "default"}
            async with http.post(f"{base}/v1/audio/speech", json=speech) as response:
                message = (await response.json())["error"]["message"]
                assert (response.status, response.headers.get("Retry-After")) == (503, "1")
                assert "still reading the kept jobs" in message
            gate.set()
            async with asyncio.timeout(seconds(30)):
                while not scheduler.loaded:
                    await asyncio.sleep(0.01)
            async with http.get(f"{base}/jobs") as response:
                listed = {job["job_id"] for job in (await response.json())["jobs"]}
            assert listed == {*finished, interrupted}
            async with http.post(f"{base}/synth_batch?async=1", json=submit) as response:
                queued = (await response.json())["job_id"]
            async with asyncio.timeout(seconds(30)), http.get(f"{base}/jobs/{queued}/events") as response:
                lines = [json.loads(line) async for line in response.content if line.strip()]
            assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 1
        assert engine.calls == ["재개.", "새 작업."]  # the interrupted job first, as before
    finally:
        gate.set()
        await listener.close()


async def test_a_shutdown_while_the_kept_jobs_are_read_stops_the_reading(settings):
    state = Path(settings.state_dir)
    for i in range(3):
        write_job(state, time.time() + i, ["재개."])
    scheduler, listener, _, reached = await serve_holding_the_reading(settings, ToneEngine(), stop_gate=True)
    await asyncio.to_thread(reached.wait, seconds(30))
    async with asyncio.timeout(seconds(10)):
        await listener.close()
    assert scheduler.queue_size() == 0  # nothing was resumed: the next start reads them again


async def test_a_job_whose_done_was_lost_after_its_last_section_ends_at_start(worker, settings):
    """Every section ended but `done` never reached the log (a kill between them, a full disk): the job
    was queued with nothing to run, `interrupted` and counted running for ever, its events never ending."""
    state = Path(settings.state_dir)
    job_id = write_job(state, time.time(), ["끝."])
    wav = str(state / "jobs" / job_id / "s00.wav")
    ok = {"event": "progress", "idx": 0, "status": "ok", "wav_path": wav, "duration_sec": 1.0, "seq": 2}
    with open(state / "jobs" / job_id / "events.ndjson", "a") as log:
        log.write(json.dumps(ok) + "\n")
    empty = write_job(state, time.time(), [])
    client = await worker()
    for each in (job_id, empty):
        async with asyncio.timeout(seconds(30)):
            response = await client.get(f"/jobs/{each}/events")
            lines = [json.loads(line) async for line in response.content if line.strip()]
        assert lines[-1]["event"] == "done" and not lines[-1]["cancelled"]
    result = await (await client.get(f"/jobs/{job_id}/result")).json()
    assert (result["status"], result["wav_paths"]) == ("done", [wav])
    assert (await (await client.get("/health")).json())["jobs_running"] == 0


async def test_a_job_folder_that_cannot_be_removed_is_skipped_not_the_end_of_start_up(worker, settings):
    """A folder without its job.json is removed at start; one whose job.json is a folder could not be
    (IsADirectoryError): every kept job was then unread and every request a 503 StateUnavailable."""
    state = Path(settings.state_dir)
    kept = write_job(state, time.time(), ["끝."], done=True)
    odd = state / "jobs" / "odd"
    (odd / "job.json").mkdir(parents=True)
    client = await worker()
    async with client.get("/health") as response:
        assert response.status == 200, await response.text()
    assert (await client.get(f"/jobs/{kept}/status")).status == 200
    assert (odd / "job.json").is_dir()  # not ours to guess at: left with a warning


async def test_kept_jobs_that_could_not_be_read_make_health_say_fail(worker, monkeypatch):
    """The engine loaded but the reading failed (here the jobs folder cannot be listed: a disk error,
    which root's permissions cannot stage): /health answered 500 with status "ok", which a supervisor
    reading the body takes for a working worker."""
    from npu_worker.jobs.store import JobStore

    def failing(self, progress=None):
        raise OSError(5, "Input/output error", str(self.root))

    monkeypatch.setattr(JobStore, "load_all", failing)
    client = await worker()
    async with client.get("/health") as response:
        health = await response.json()
    assert response.status == 500
    assert health["status"] == "fail" and health["error"].startswith("StateUnavailable")


async def test_a_job_killed_before_its_start_gets_it_first_once_the_engine_has_loaded(worker, settings):
    """`start` names what the loaded engine says (backend, device, rate): a job whose log has none waits
    for the engine, and its lookups get `Loading` meanwhile, so no caller sees its log without it."""
    state = Path(settings.state_dir)
    job_id = write_job(state, time.time(), ["재개."])
    (state / "jobs" / job_id / "events.ndjson").unlink()
    engine = ToneEngine(load_delay=0.5)
    client = await worker(engine, wait_loaded=False)
    async with asyncio.timeout(seconds(30)):
        while (response := await client.get(f"/jobs/{job_id}/events")).status == 503:
            assert (await response.json())["error"].startswith("Loading: "), "a refusal other than Loading"
            await asyncio.sleep(0.02)
        lines = [json.loads(line) async for line in response.content if line.strip()]
    info = engine.info
    start = {"event": "start", "total": 1, "backend": info.backend, "device": info.device, "job_id": job_id}
    assert lines[0] == {**start, "sample_rate": info.sample_rate, "seq": 1}
    assert [line["event"] for line in lines] == ["start", "progress", "progress", "done"]
