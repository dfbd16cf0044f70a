"""Nodes in the shared queue against a real redis-server: heartbeats by Redis's clock, who is alive,
nodes gone for good forgotten, a node's stable name, engine nodes that would voice a job differently."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

from tests.test_cluster_store import create, make_job, ok
from tests.timing import seconds


async def test_a_node_whose_clock_is_off_looks_alive_and_ends_jobs_with_a_true_elapsed(jobs, monkeypatch):
    """Nodes' clocks drift (a box without NTP): heartbeats and a job's end use Redis's clock, so an engine
    node an hour behind is still alive to the others and the `done` it logs does not say -3600 s."""
    import time

    await create(jobs, make_job("skew", 1), window=1)  # accepted by a node with a true clock
    true_time = time.time
    monkeypatch.setattr(time, "time", lambda: true_time() - 3600)  # the engine node's clock
    await jobs.heartbeat("behind", {"role": "engine"})
    assert await jobs.made_ok("skew", "behind", 0, b"wav", ok(0)) == 2
    monkeypatch.setattr(time, "time", true_time)
    assert [n["node"] for n in (await jobs.cluster_view(5.0))["nodes"]] == ["behind"]
    loaded = await jobs.load("skew")
    assert loaded is not None and 0 <= loaded.log[-1].event.elapsed_total_sec < 60  # type: ignore[attr-defined]


async def test_a_node_gone_for_good_leaves_no_heartbeat_stream_or_consumer_but_what_still_waits(
    jobs, redis_server
):
    """Every node id ever used kept its `npu:nodes` entry, its `ready:<node>` stream and its consumer in
    the engines' group for good. A node silent for a day loses them, except a writers' stream with
    entries waiting and a consumer holding an item; a live node keeps everything."""
    import redis.asyncio as aioredis

    planter = aioredis.from_url(redis_server.url)
    await jobs.ensure_groups("n3")
    await create(jobs, make_job("j", 2), window=2)
    assert await jobs.claim("n1", own=False, block_ms=10)  # n1 runs and finishes an item
    (held,) = await jobs.claim("n2", own=False, block_ms=10)  # n2 dies holding one
    (done,) = await jobs.claim("n1", own=True, block_ms=0)
    await jobs.ack(done)
    assert await jobs.made("j", "n2", 1, b"w", {"duration": 1, "elapsed": 0, "cached": False})
    for node in ("n1", "n2", "n3"):
        await jobs.heartbeat(node, {"role": "both"})
    now = await jobs.now()
    for node in ("n1", "n2"):
        await planter.hset("npu:nodes", node, json.dumps({"role": "both", "seen": now - 2 * 86400}))
    assert sorted(await jobs.forget_gone_nodes(86400)) == ["n1", "n2"]
    assert list(await planter.hgetall("npu:nodes")) == [b"n3"]
    assert not await planter.exists("npu:ready:n1")
    assert await planter.xlen("npu:ready:n2") == 1 and await planter.exists("npu:ready:n3")
    consumers = {
        c["name"]
        for stream in ("npu:q:first", "npu:q:batch")
        for c in await planter.xinfo_consumers(stream, "engines")
    }
    assert b"n1" not in consumers and b"n2" in consumers  # n2 still holds `held` (a peer takes it over)
    assert held.job_id == "j"
    assert await jobs.forget_gone_nodes(86400) == []
    await planter.aclose()


async def test_a_running_node_forgets_nodes_gone_for_good(worker, redis_server):
    """The cleanup and the recount run from every node's heartbeat loop (an engine node too: it has no
    retention loop)."""
    import redis.asyncio as aioredis

    planter = aioredis.from_url(redis_server.url)
    seconds_now, _micros = await planter.time()
    await planter.hset("npu:nodes", "old", json.dumps({"role": "engine", "seen": seconds_now - 2 * 86400}))
    await planter.xgroup_create("npu:ready:old", "writers", id="0", mkstream=True)
    await planter.set("npu:pending", 77)  # sections of jobs whose records went: counted again
    await worker(queue=redis_server.url, role="engine")
    async with asyncio.timeout(seconds(10)):
        while await planter.hexists("npu:nodes", "old") or await planter.exists("npu:ready:old"):
            await asyncio.sleep(0.05)
        while await planter.get("npu:pending") != b"0":
            await asyncio.sleep(0.05)
    await planter.aclose()


async def test_an_empty_node_id_file_gets_a_name_not_the_empty_one(worker, redis_server, settings):
    """A crash while `node-id` was first written left it empty, and the node joined as "": two such nodes
    were one consumer (each took the other's claims, wrote the other's files on its own disk)."""
    from npu_worker.app_keys import SCHEDULER_KEY

    state = Path(settings.state_dir)
    state.mkdir(parents=True)
    (state / "node-id").write_text("\n", encoding="utf-8")
    client = await worker(queue=redis_server.url)
    node = client.app[SCHEDULER_KEY].node
    assert node and (state / "node-id").read_text(encoding="utf-8") == node + "\n"


async def test_an_api_node_without_engines_says_so_not_that_its_engine_is_loading(
    worker, redis_server, tmp_path, monkeypatch
):
    """/ready and the OpenAI routes on an api node whose engine nodes are all gone said "the engine is
    still loading": it loads none."""
    from npu_worker.openai_compat import load_wait

    monkeypatch.setattr(load_wait, "LOAD_WAIT_SECONDS", 0.0)  # what the speech route says past its wait
    client = await worker(queue=redis_server.url, role="api", wait_loaded=False)
    ready = await client.get("/ready")
    assert ready.status == 503
    assert (await ready.json())["reason"] == "no engine node is alive in the queue"
    speech = await client.post("/v1/audio/speech", json={"model": "tts-1", "voice": "alloy", "input": "hi"})
    assert speech.status == 503 and "no engine node is alive" in (await speech.json())["error"]["message"]
    synth = await client.post("/synth", json={"text": "hi", "output_path": str(tmp_path / "a.wav")})
    assert synth.status == 503 and "no engine node is alive" in (await synth.json())["error"]


async def test_engine_nodes_that_would_voice_a_job_differently_are_named_in_the_log(
    worker, redis_server, caplog
):
    """A job's sections go to whichever engine node is free: an espeak node beside this one would speak
    every other slide of a lecture in another voice, and nothing said so."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY

    caplog.set_level(logging.WARNING, logger="npu_worker.jobs.cluster.heartbeat")
    client = await worker(queue=redis_server.url)
    planter = aioredis.from_url(redis_server.url)
    now, _micros = await planter.time()
    other = {"role": "engine", "backend": "espeak-ng", "device": "cpu", "precision": "int16"}
    # alive for 9 s: a beat further ahead of Redis's clock is none of a node's
    other.update(sample_rate=24000, model="espeak-ng-1.52", seed=0, claim_timeout=30, seen=now + 4)
    await planter.hset("npu:nodes", "other", json.dumps(other))
    await planter.aclose()

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if "engine nodes differ" in r.getMessage()]

    async with asyncio.timeout(seconds(5)):
        while not said():
            await asyncio.sleep(0.05)
    assert len(said()) == 1 and "espeak-ng" in said()[0] and client.app[SCHEDULER_KEY].node in said()[0]
    await asyncio.sleep(1.5)  # the next heartbeats see the same difference: said once
    assert len(said()) == 1


async def test_a_planted_decoder_calls_value_is_left_out_of_the_node_not_echoed(jobs):
    """`decoder_calls` is what an engine node's /health counts; any local process can write Redis, so a
    value not of that shape is dropped from the node's entry (the node itself is still shown)."""
    beat = {"role": "engine", "backend": "zipvoice-onnx", "device": "qnn", "precision": "fp16"}
    beat |= {"sample_rate": 24000, "model": "m"}
    planted = [{"total": "9" * 5000, "cpu_overflow": 0}, {"total": -1, "cpu_overflow": 0}, [1, 2], True]
    for index, calls in enumerate([{"total": 7, "cpu_overflow": 2}, *planted]):
        await jobs.heartbeat(f"n{index}", beat | {"decoder_calls": calls})
    nodes = (await jobs.cluster_view(5.0))["nodes"]
    assert [node.get("decoder_calls") for node in nodes] == [{"total": 7, "cpu_overflow": 2}] + [None] * 4


async def test_a_heartbeat_from_the_future_is_no_live_node_for_ever(jobs, redis_server, settings):
    """A beat whose `seen` is ahead of Redis's clock (planted, or left by a Redis whose clock then
    stepped back) counted as alive for as long as it was ahead: a phantom engine node kept an api node
    accepting work no node ran, held off the engines' failure for good (`sound_engine_ago` 0), made every
    node wait its `claim_timeout` of a day before taking a dead node's sections, and was never forgotten."""
    from npu_worker.jobs.cluster.heartbeat import NODE_GONE_AFTER, Heartbeat

    heartbeat = Heartbeat(jobs, settings)
    now = await jobs.now()
    phantom = {
        "role": "engine",
        "backend": "tone",
        "device": "cpu",
        "precision": "fp32",
        "sample_rate": 24000,
    }
    phantom |= {"model": "tone", "claim_timeout": 86400, "seen": now + 1e6}
    await jobs.redis.hset("npu:nodes", "phantom", json.dumps(phantom))
    await jobs.heartbeat("failed", {"role": "engine", "load_error": "ModelLoadError: no model"})
    await heartbeat.read_view()
    assert [n["node"] for n in heartbeat.view["nodes"]] == ["failed"]
    assert heartbeat.patience() == settings.claim_timeout
    error = heartbeat.engines_failed()
    assert error is not None and "failed: ModelLoadError: no model" in str(error)
    assert await jobs.forget_gone_nodes(NODE_GONE_AFTER) == ["phantom"]


async def test_a_node_restarted_as_an_engine_node_still_writes_the_files_of_jobs_it_accepted(
    worker, redis_server, settings, tmp_path
):
    """A `both` node restarted with `--role engine` (the same state directory, so the same name) ran no
    writer: the sections made for the jobs it had accepted waited in its `ready` stream for ever, their
    files never written, their jobs never ended (and counted toward `--max-queue` for good)."""
    from npu_worker.jobs.cluster.store import RedisJobs
    from npu_worker.jobs.model import Job, Section
    from npu_worker.protocol import Start, SynthParams

    state = Path(settings.state_dir)
    state.mkdir(parents=True)
    (state / "node-id").write_text("was-both\n", encoding="utf-8")
    jobs = RedisJobs(redis_server.url)
    out = tmp_path / "accepted-before.wav"
    job = Job("beforerole", SynthParams(), [Section(0, "x", str(out))])
    try:
        await jobs.ensure_groups("was-both")
        await jobs.create(job, "was-both", Start(1, "tone", "cpu", job.id, 24000), max_queue=100, window=0)
        await jobs.redis.hset("npu:job:beforerole", "next", 1)  # made by a peer: its ready entry below
        assert await jobs.made(job.id, "was-both", 0, b"RIFF", {"duration": 1, "elapsed": 0, "cached": False})
        await worker(queue=redis_server.url, role="engine")
        async with asyncio.timeout(seconds(10)):
            while (loaded := await jobs.load(job.id)) is None or not loaded.finished:
                await asyncio.sleep(0.05)
        assert loaded.log[-1].event.ok_count == 1  # type: ignore[attr-defined]
        assert await asyncio.to_thread(out.read_bytes) == b"RIFF"
    finally:
        await jobs.close()


async def test_an_engine_node_that_stops_cleanly_leaves_the_view_at_once(worker, redis_server, tmp_path):
    """A stopped engine node counted as alive until its beat was 5 s old: an api node's /health listed it
    and counted it in `engines_alive`, and accepted work for it. A clean stop marks its beat `stopped`:
    the next view has no such node, while its beat stays (a rolling restart, forgetting it later)."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY
    from npu_worker.jobs.cluster.heartbeat import RESTART_GRACE

    cluster = {"queue": redis_server.url}
    engine = await worker(role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    name = engine.app[SCHEDULER_KEY].node
    api = await worker(role="api", state_dir=str(tmp_path / "api"), **cluster)
    async with asyncio.timeout(seconds(10)):
        while (await (await api.get("/health")).json())["cluster"]["engines_alive"] != 1:
            await asyncio.sleep(0.05)
    await engine.close()  # the app's cleanup: the scheduler's stop, as at a SIGTERM
    health = await (await api.get("/health")).json()
    assert health["cluster"]["engines_alive"] == 0, health
    assert name not in [node["node"] for node in health["cluster"]["nodes"]], health
    planter = aioredis.from_url(redis_server.url)
    try:
        beat = json.loads(await planter.hget("npu:nodes", name))
    finally:
        await planter.aclose()
    assert beat["stopped"] is True and beat["backend"] == "tone", beat
    ago = api.app[SCHEDULER_KEY].heartbeat.sound_engine_ago
    assert ago is not None and ago < RESTART_GRACE  # a rolling restart's gap is still no failure


async def test_a_clean_stop_leaves_alone_the_beat_of_the_node_restarted_under_its_name(
    jobs, redis_server, settings
):
    """A node restarted under the same name (its state dir's `node-id`) beat while the old process still
    drained: the old one's stop wrote its own last beat over the new one's, marked `stopped`, and every
    view dropped the live node until its next beat. The stop marks only the beat it wrote itself."""
    from npu_worker.jobs.cluster.heartbeat import Heartbeat
    from npu_worker.jobs.cluster.store import RedisJobs

    old = Heartbeat(jobs, settings)
    old.node = "n1"
    beating = asyncio.create_task(old.run(lambda: None))
    async with asyncio.timeout(seconds(10)):
        while await jobs.redis.hget("npu:nodes", "n1") is None:
            await asyncio.sleep(0.01)
    beating.cancel()
    await asyncio.gather(beating, return_exceptions=True)
    restarted = RedisJobs(redis_server.url)  # the new process, its own connection
    try:
        await restarted.heartbeat("n1", {"role": "both", "claim_timeout": settings.claim_timeout})
        await old.leave()
        assert [n["node"] for n in (await jobs.cluster_view(5.0))["nodes"]] == ["n1"]
        assert "stopped" not in json.loads(await jobs.redis.hget("npu:nodes", "n1"))
        await restarted.leave("n1")  # its own stop, later, marks its own beat
        assert (await jobs.cluster_view(5.0))["nodes"] == []
    finally:
        await restarted.close()
