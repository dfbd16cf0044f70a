"""An api node whose live engine nodes all failed to load: told at once, as a failed worker tells it.

A failed engine node's heartbeat looked like a loading one's: the api node answered every submission
503 `Loading` for ever, and a shared job's status `interrupted` and its stream heartbeats, for ever.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import redis.asyncio as redis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.jobs.cluster.heartbeat import ALIVE_WITHIN, RESTART_GRACE, Heartbeat
from npu_worker.jobs.cluster.keys import NODES
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.protocol import ModelLoadError, Start, SynthParams
from tests.test_failed_load_jobs import FailingLoad
from tests.test_ws_support import connect, run_request
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_an_api_node_whose_engine_nodes_all_failed_answers_their_failure(
    worker, redis_server, tmp_path
):
    cluster = {"queue": redis_server.url, "wait_loaded": False}  # each node its own state dir: its own name
    api = await worker(role="api", state_dir=str(tmp_path / "api"), heartbeat_interval=0.2, **cluster)
    scheduler = api.app[SCHEDULER_KEY]
    job = Job(new_job_id(), SynthParams(), [Section(0, "문장.", None)])  # accepted before the engines failed
    start = Start(job.total, "tone", "cpu", job.id, 24000)
    assert await scheduler.jobs.create(job, scheduler.node, start, max_queue=100, window=2) == 1
    gate = threading.Event()
    await worker(FailingLoad(gate), role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    batch = {"sections": [{"idx": 0, "text": "새 작업."}]}
    async with asyncio.timeout(seconds(30)):
        while (health := await (await api.get("/health")).json())["cluster"]["engines_alive"] != 1:
            await asyncio.sleep(0.05)
        assert health["status"] == "loading"  # the engine node loads: nothing failed yet
        async with api.post("/synth_batch?async=1", json=batch) as response:
            assert response.status == 503 and (await response.json())["error"].startswith("Loading: ")
        response = await api.get(f"/jobs/{job.id}/events")
        assert response.status == 200
        assert json.loads(await response.content.readline())["event"] == "start"
        gate.set()
        rest = [json.loads(line) async for line in response.content if line.strip()]
    assert {line["event"] for line in rest} <= {"heartbeat"}  # ended, without a `done`
    async with api.get("/health") as answer:
        health = await answer.json()
    assert (answer.status, health["status"], health["fallback"]) == (500, "fail", "cpu"), health
    assert health["error"].startswith("ModelLoadError: every engine node failed to load its engine (")
    assert "model directory /nowhere does not exist" in health["error"]
    for method, path, body in (
        ("GET", f"/jobs/{job.id}/status", None),
        ("GET", f"/jobs/{job.id}/events?after=1", None),
        ("POST", "/synth_batch?async=1", batch),
    ):
        async with api.request(method, path, json=body) as answer:
            refused = await answer.json()
            assert (answer.status, refused["error"]) == (500, health["error"]), path


def test_an_api_node_refuses_only_while_every_live_engine_node_failed(redis_server, settings):
    """One engine node that runs or loads still takes the shared jobs: no refusal then."""
    heartbeat = Heartbeat(RedisJobs(redis_server.url), settings)
    failed = {"node": "a", "role": "engine", "load_error": "ModelLoadError: no model", "fallback": None}
    loaded = {"node": "b", "role": "engine", "backend": "tone"}
    loading = {"node": "c", "role": "both"}
    for nodes in ([], [failed, loaded], [loading, failed], [{"node": "d", "role": "api"}]):
        heartbeat.view = {"nodes": nodes, "queue_depth": 0}
        assert heartbeat.engines_failed() is None, nodes
    heartbeat.view = {
        "nodes": [failed, {**failed, "node": "e"}, {"node": "d", "role": "api"}],
        "queue_depth": 0,
    }
    error = heartbeat.engines_failed()
    assert error is not None and str(error) == (
        "ModelLoadError: every engine node failed to load its engine (a: ModelLoadError: no model)"
    )


async def asked_when_the_last_running_engine_node_goes(worker, redis_server, tmp_path, ask) -> str:
    """`ask(api)`'s error when the engine node running its request went away and the one left had
    failed to load (what it answered before: 404 `JobNotFound`, "gone from the shared queue; send it
    again", yet the job is there and a resend is refused for the engines' failure)."""
    cluster = {"queue": redis_server.url, "wait_loaded": False}
    api = await worker(role="api", state_dir=str(tmp_path / "api"), **cluster)
    await worker(FailingLoad(), role="engine", state_dir=str(tmp_path / "failed"), **cluster)
    slow = ToneEngine(delay_per_chunk=0.05)  # 20 s of audio, 10 s to make: still running when it goes
    running = await worker(
        slow, role="engine", state_dir=str(tmp_path / "runs"), shutdown_grace=0.1, **cluster
    )
    async with asyncio.timeout(seconds(30)):
        while (await api.get("/health")).status != 200:
            await asyncio.sleep(0.05)
        asked = asyncio.ensure_future(ask(api))
        while not slow.calls and not asked.done():
            await asyncio.sleep(0.02)
        assert not asked.done(), await asked
        await running.close()  # its section is stopped by the drain and left in the queue
        async with redis.Redis.from_url(redis_server.url) as client:  # silent past ALIVE_WITHIN
            await client.hdel(NODES, running.app[SCHEDULER_KEY].node)
        return await asked


LONG_TEXT = "가" * 1000
ENGINES_FAILED = "ModelLoadError: every engine node failed to load its engine ("


async def test_a_synth_waiting_when_the_last_running_engine_node_goes_is_told_the_failure(
    worker, redis_server, tmp_path
):
    async def synth(api) -> str:
        body = {"text": LONG_TEXT, "output_path": str(tmp_path / "s.wav")}
        async with api.post("/synth", json=body) as answer:
            assert answer.status == 500
            return (await answer.json())["error"]

    error = await asked_when_the_last_running_engine_node_goes(worker, redis_server, tmp_path, synth)
    assert error.startswith(ENGINES_FAILED), error
    # Its preview was left queued in Redis, to be made (and its file written) for nobody by the next
    # engine node that loads.
    async with redis.Redis.from_url(redis_server.url) as client, asyncio.timeout(seconds(10)):
        while await client.zcard("npu:previews") or int(await client.get("npu:pending") or 0):
            await asyncio.sleep(0.02)


async def test_a_websocket_request_when_the_last_running_engine_node_goes_is_told_the_failure(
    worker, redis_server, tmp_path
):
    async def over_websocket(api) -> str:
        ws = await connect(api)
        await ws.send_json({"type": "synth", "text": LONG_TEXT})
        while not isinstance(message := await ws.receive(), dict) or "error" not in message:
            pass
        await ws.close()
        return message["error"]

    error = await asked_when_the_last_running_engine_node_goes(worker, redis_server, tmp_path, over_websocket)
    assert error.startswith(ENGINES_FAILED), error


async def test_an_openai_speech_when_the_last_running_engine_node_goes_is_told_the_failure(
    worker, redis_server, tmp_path
):
    async def speech(api) -> str:
        body = {"model": "tts-1", "input": LONG_TEXT, "voice": "default", "response_format": "flac"}
        async with api.post("/v1/audio/speech", json=body) as answer:  # a whole-file format: sent at its end
            error = (await answer.json())["error"]
            assert (answer.status, error["code"]) == (500, "ModelLoadError"), error
            return f"{error['code']}: {error['message']}"

    error = await asked_when_the_last_running_engine_node_goes(worker, redis_server, tmp_path, speech)
    assert error.startswith(ENGINES_FAILED), error


async def test_an_engine_node_restarting_beside_a_failed_one_is_no_refusal_within_the_grace(
    redis_server, settings
):
    """A rolling restart: one engine node failed for good, the other silent past ALIVE_WITHIN while it
    restarts. The api node answered 500 `ModelLoadError` in that gap (clients gave up); it refuses only
    once no engine node that ran or loaded was heard for RESTART_GRACE s."""
    jobs = RedisJobs(redis_server.url)
    heartbeat = Heartbeat(jobs, settings)
    try:
        await jobs.heartbeat("failed", {"role": "engine", "load_error": "ModelLoadError: no model"})
        now = await jobs.now()
        for silent, refused in ((ALIVE_WITHIN + 5, False), (RESTART_GRACE + 1, True)):
            ran = {"role": "engine", "backend": "tone", "device": "cpu", "precision": "fp32"}
            ran |= {"sample_rate": 24000, "model": "tone", "seen": now - silent}
            await jobs.redis.hset(NODES, "restarting", json.dumps(ran))
            await heartbeat.read_view()
            assert [n["node"] for n in heartbeat.view["nodes"]] == ["failed"]  # the view: it alone
            assert "sound_engine_ago" not in heartbeat.view  # not a /health field
            assert (heartbeat.engines_failed() is not None) == refused, silent
    finally:
        await jobs.close()


async def test_a_heartbeat_too_large_to_be_of_ours_is_left_out_of_the_view(redis_server, settings):
    """Any local process can write to Redis: a 'failed' engine node's beat of 1 MB was echoed whole
    by every /health (`cluster.nodes`) and parsed every second by every node."""
    jobs = RedisJobs(redis_server.url)
    heartbeat = Heartbeat(jobs, settings)
    try:
        await jobs.heartbeat("honest", {"role": "engine", "load_error": "ModelLoadError: " + "가" * 990})
        await jobs.heartbeat("planted", {"role": "engine", "load_error": "x" * 1_000_000})
        await heartbeat.read_view()
        assert [n["node"] for n in heartbeat.view["nodes"]] == ["honest"]
    finally:
        await jobs.close()


def two_engines_one_failed(health: dict) -> bool:
    nodes = health.get("cluster", {}).get("nodes", [])
    return sorted("load_error" in n for n in nodes if "backend" in n or "load_error" in n) == [False, True]


async def test_a_both_node_whose_own_engine_failed_accepts_work_its_peers_run(worker, redis_server, tmp_path):
    """A `both` node is an api node too: its own engine's failure refused every submission (500
    `ModelLoadError`) and its /health said `fail` (a client asking it after a stream's end gave up), while
    a healthy engine node could run the work. It answers as an api node does; its beat says why."""
    cluster = {"queue": redis_server.url, "wait_loaded": False}
    zipvoice = {"backend": "zipvoice-onnx", "model_dir": str(tmp_path / "no-model")}  # the real engine
    both = await worker(None, role="both", state_dir=str(tmp_path / "both"), **zipvoice, **cluster)
    await worker(role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    async with asyncio.timeout(seconds(30)):  # both in the view: the failed one, the one that runs
        while not two_engines_one_failed(health := await (answer := await both.get("/health")).json()):
            await asyncio.sleep(0.05)
    assert (answer.status, health["status"], health["backend"]) == (200, "ok", "tone"), health
    own = next(n for n in health["cluster"]["nodes"] if n["node"] == both.app[SCHEDULER_KEY].node)
    assert own["load_error"].startswith("ModelLoadError: ")
    assert (await both.get("/ready")).status == 200
    out = tmp_path / "s0.wav"
    body = {"sections": [{"idx": 0, "text": "slide", "output_path": str(out)}], "stream": False}
    async with both.post("/synth_batch", json=body) as answer:
        result = await answer.json()
        assert (answer.status, result["ok_count"]) == (200, 1), result
    assert await asyncio.to_thread(out.is_file)  # written by the accepting node, made by its peer
    preview = {"text": "preview", "lang": "ko", "output_path": str(tmp_path / "p.wav")}
    async with both.post("/synth", json=preview) as answer:  # a language not checked yet:
        assert answer.status == 200, await answer.text()  # the failed engine has none to check it with
    speech = {"model": "tts-1", "input": "hello", "voice": "default", "response_format": "wav"}
    async with both.post("/v1/audio/speech", json=speech) as answer:
        assert answer.status == 200, await answer.text()
        assert (await answer.read())[:4] == b"RIFF"
    ws = await connect(both)
    heard = await run_request(ws, {"type": "synth", "text": "hello"})  # its PCM through Redis
    await ws.close()
    assert heard.done["ok_count"] == 1 and heard.section_pcm(0), heard.events()


def no_espeak_library() -> Any:
    raise ModelLoadError("libespeak-ng.so.1: cannot open shared object file")


async def test_a_both_node_whose_espeak_failed_lists_voices_as_an_api_node_does(
    worker, redis_server, tmp_path
):
    """The OpenAI routes consulted the node's own engine, failed: `GET /v1/audio/voices` asked the espeak
    engine that never loaded for its voices and answered 500 `EngineError: espeak engine used before
    load()`, while the node's /health was 200 `ok` and it accepted speech for its peer to make."""
    cluster = {"queue": redis_server.url, "wait_loaded": False}
    both = await worker(
        EspeakEngine(no_espeak_library), role="both", state_dir=str(tmp_path / "b"), **cluster
    )
    await worker(role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    async with asyncio.timeout(seconds(30)):  # both in the view: the failed one, the one that runs
        while not two_engines_one_failed(await (await both.get("/health")).json()):
            await asyncio.sleep(0.05)
    async with both.get("/v1/audio/voices") as answer:
        assert answer.status == 200, await answer.text()
        assert "default" in (await answer.json())["voices"]  # an api node's list: its engines' default
    speech = {"model": "tts-1", "input": "hello", "voice": "default", "response_format": "wav"}
    async with both.post("/v1/audio/speech", json=speech) as answer:
        assert answer.status == 200, await answer.text()
        # read to its end: a speech left unread at the test's end kept both nodes' shutdown waiting out
        # their 30 s grace (Redis, stopped first, could not end it): 35 s of the suite's teardown
        assert (await answer.read())[:4] == b"RIFF"
