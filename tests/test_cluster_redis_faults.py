"""A Redis that is full (its `maxmemory` reached: every write refused with OOM) or hung (stopped: it
accepts connections and answers nothing): the nodes wait it out and lose nothing, and a caller gets a
named 503 within one command timeout."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from pathlib import Path

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.pcm_stream import PcmPublisher
from npu_worker.jobs.cluster.store import COMMAND_TIMEOUT
from npu_worker.jobs.cluster.writer import OutputWriter
from npu_worker.jobs.model import AudioChunk, Job, Section
from npu_worker.paths import PathPolicy
from npu_worker.protocol import Done, Progress, Start, SynthParams
from tests.cluster_support import stored_wav
from tests.redis_server import RedisServer
from tests.test_cluster_store import make_job, ok
from tests.timing import seconds
from tests.tone_engine import ToneEngine


def set_maxmemory(redis_server: RedisServer, value: int) -> None:
    """1 byte: every write is refused (OOM, the default noeviction policy); 0: no limit."""
    assert redis_server.command("CONFIG", "SET", "maxmemory", str(value)).startswith(b"+OK")


async def engines_alive(client) -> None:
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)


async def test_a_section_whose_ok_met_a_full_redis_is_logged_once_redis_has_room(
    jobs, redis_server, tmp_path
):
    """The writer wrote the file and FINAL met Redis full: its `ready` entry stayed pending and was never
    read again (a writer has no XAUTOCLAIM), so the section was never `ok` and its job never ended."""
    out = tmp_path / "s0.wav"
    job = Job("full", SynthParams(), [Section(0, "x", str(out))])
    await jobs.create(job, "n1", Start(1, "tone", "cpu", job.id, 24000), max_queue=100, window=0)
    await jobs.redis.hset("npu:job:full", "next", 1)  # made elsewhere: not queued here
    assert await jobs.made(job.id, "n1", 0, b"RIFF", {"duration": 1, "elapsed": 0, "cached": False})
    set_maxmemory(redis_server, 1)
    policy = PathPolicy((str(tmp_path),), str(tmp_path / "state"))
    writer = asyncio.create_task(OutputWriter(jobs, "n1", policy, lambda job_id: None).run())
    try:
        async with asyncio.timeout(seconds(5)):
            while not await asyncio.to_thread(out.exists):  # written; its FINAL then refused
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        loaded = await jobs.load(job.id)
        assert loaded is not None and not loaded.finished
        set_maxmemory(redis_server, 0)
        async with asyncio.timeout(seconds(10)):
            while not (loaded := await jobs.load(job.id)) or not loaded.finished:
                await asyncio.sleep(0.05)
    finally:
        set_maxmemory(redis_server, 0)
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
    events = [entry.event for entry in loaded.log]
    assert isinstance(events[1], Progress) and events[1].status == "ok"
    assert isinstance(events[2], Done) and events[2].ok_count == 1


async def test_a_full_redis_still_answers_status_and_lets_retention_free_memory(jobs, redis_server):
    """MULTI is refused whole on a full Redis, reads included: a job's status was a 503, and retention
    (the one thing that frees memory), the engines' and the writers' acknowledgements all failed, so a
    Redis that filled up stayed full until an operator stepped in."""
    done = make_job("finished", 1)
    await jobs.create(done, "n1", Start(1, "tone", "cpu", done.id, 24000), max_queue=100, window=1)
    (item,) = await jobs.claim("n1", own=False, block_ms=10)
    assert await jobs.made_ok(done.id, "n1", 0, b"RIFF" * 1000, ok(0)) == 2
    set_maxmemory(redis_server, 1)
    try:
        loaded = await jobs.load(done.id)
        assert loaded is not None and loaded.finished
        await jobs.ack(item)
        assert await jobs.claim("n1", own=True, block_ms=0) == []
        await jobs.remove(loaded, "n1")
        assert await jobs.load(done.id) is None and await stored_wav(jobs, done.id, 0) is None
        await jobs.forget("gone", "n1")
    finally:
        set_maxmemory(redis_server, 0)


async def test_the_pcm_sender_outlives_a_key_redis_refuses_and_waits_out_a_full_redis(jobs, redis_server):
    """One refused pipeline (a PCM key planted with another type, or Redis full) ended the node's sender
    for good: no streamed job of that node got its audio through Redis again."""
    publisher = PcmPublisher(jobs)
    sender = publisher.start()
    chunk = AudioChunk(0, np.full(480, 0.25, dtype=np.float32), None)
    try:
        await jobs.redis.set("npu:pcm:planted", "not a stream")
        publisher.put(("planted", 0, "a1", chunk))
        async with asyncio.timeout(seconds(5)):
            await publisher.flushed()
        publisher.put(("later", 0, "a2", chunk))
        async with asyncio.timeout(seconds(5)):
            await publisher.flushed()
        assert await jobs.redis.xlen("npu:pcm:later") == 1
        set_maxmemory(redis_server, 1)
        publisher.put(("full", 0, "a3", chunk))
        await asyncio.sleep(0.3)
        set_maxmemory(redis_server, 0)
        async with asyncio.timeout(seconds(5)):
            await publisher.flushed()
        assert await jobs.redis.xlen("npu:pcm:full") == 1
    finally:
        set_maxmemory(redis_server, 0)
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)


async def test_a_node_waits_out_a_full_redis_with_the_audio_it_made(worker, redis_server, tmp_path):
    """A section that ended while Redis was full failed (its `ok` refused, then its error too) and ran
    again after the claim timeout; a submit meanwhile said only that the queue refused the job."""
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05)
    client = await worker(engine, queue=redis_server.url, claim_timeout=1.0)
    await engines_alive(client)
    node = client.app[SCHEDULER_KEY].engine_node
    body = {"sections": [{"text": "x" * 30, "output_path": str(tmp_path / "s0.wav")}]}  # made in 0.6 s
    job_id = (await (await client.post("/synth_batch?async=1", json=body)).json())["job_id"]
    async with asyncio.timeout(seconds(5)):
        while node.running is None:
            await asyncio.sleep(0.01)
    set_maxmemory(redis_server, 1)
    try:
        refused = await client.post("/synth_batch?async=1", json={"sections": [{"text": "more"}]})
        assert refused.status == 503
        assert (await refused.json())["error"].startswith("QueueUnavailable: Redis is full")
        await asyncio.sleep(2.0)  # the section ends meanwhile, and the claim timeout passes
    finally:
        set_maxmemory(redis_server, 0)
    lines = [json.loads(line) async for line in (await client.get(f"/jobs/{job_id}/events")).content]
    assert [line.get("status") for line in lines if line["event"] == "progress"] == ["synth", "ok"]
    assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 1


async def test_a_hung_redis_is_a_named_503_within_one_command_timeout_and_is_waited_out(
    worker, redis_server, tmp_path
):
    """A stopped Redis (SIGSTOP: connections are accepted, nothing is answered) kept a submit waiting
    three command timeouts (15 s): a timed-out command was retried on a fresh connection, twice."""
    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    await engines_alive(client)
    assert redis_server.process is not None
    os.kill(redis_server.process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        response = await client.post("/synth_batch?async=1", json={"sections": [{"text": "hung"}]})
        waited = time.monotonic() - started
        body = await response.json()
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)
    assert response.status == 503, body
    assert body["error"].startswith("QueueUnavailable: Redis is unreachable (TimeoutError)")
    assert waited < 2 * COMMAND_TIMEOUT, waited  # one timeout (and a margin), not three
    async with asyncio.timeout(seconds(20)):  # Redis goes on: so does the node
        while (await client.get("/health")).status != 200:
            await asyncio.sleep(0.1)
    body = {"sections": [{"text": "after", "output_path": str(tmp_path / "after.wav")}], "stream": False}
    result = await (await client.post("/synth_batch", json=body)).json()
    assert result["ok_count"] == 1 and await asyncio.to_thread(Path(tmp_path / "after.wav").is_file)


async def test_an_api_node_says_redis_is_full_not_that_no_engine_is_alive(
    worker, redis_server, tmp_path, monkeypatch
):
    """A full Redis refuses the heartbeats too: the engines dropped out of an api node's view, and its
    callers were told `Loading: no engine node is alive in the queue` while the engines ran on. (A node
    now counts the nodes heard within ALIVE_WITHIN s of when the refusals began: the engine stays in view
    or drops out by the phase of its last beat against the api node's first refused one. This waited for
    it to drop out, which it never did where that last beat was under 1 s old: a timeout in CI.)"""
    from npu_worker.jobs.cluster import heartbeat

    monkeypatch.setattr(heartbeat, "ALIVE_WITHIN", 1.0)  # (the view's bound: 1 s, not 5 s)
    await worker(queue=redis_server.url, role="engine", state_dir=str(tmp_path / "engine"))
    api = await worker(queue=redis_server.url, role="api", state_dir=str(tmp_path / "api"))
    await engines_alive(api)
    set_maxmemory(redis_server, 1)
    try:
        async with asyncio.timeout(seconds(10)):  # the api node's heartbeat refused (polled)
            while (await (await api.get("/health")).json())["redis"] != "full":
                await asyncio.sleep(0.05)
        refused = await api.post("/synth_batch?async=1", json={"sections": [{"text": "full"}]})
        assert refused.status == 503
        assert (await refused.json())["error"].startswith("QueueUnavailable: Redis is full")
        ready = await (await api.get("/ready")).json()
        assert ready["reason"].startswith("Redis is full")
    finally:
        set_maxmemory(redis_server, 0)
    body = {"sections": [{"text": "x"}], "stream": False}
    async with asyncio.timeout(seconds(10)):  # room again: the engine is seen, requests are taken
        while (response := await api.post("/synth_batch", json=body)).status != 200:
            await asyncio.sleep(0.1)
    assert (await response.json())["ok_count"] == 1


async def test_a_node_on_a_full_redis_says_so_in_health_and_is_not_ready(worker, redis_server):
    """A `both` node's /health said `"redis": "ok"` and /ready 200 while every submit was a 503."""
    client = await worker(queue=redis_server.url)
    await engines_alive(client)
    set_maxmemory(redis_server, 1)
    try:
        async with asyncio.timeout(seconds(10)):  # its next heartbeat is refused
            while (await (await client.get("/health")).json())["redis"] != "full":
                await asyncio.sleep(0.1)
        ready = await client.get("/ready")
        assert ready.status == 503 and (await ready.json())["reason"].startswith("Redis is full")
        assert ready.headers.get("Retry-After") == "1"  # as a submit's 503 QueueUnavailable
    finally:
        set_maxmemory(redis_server, 0)
    async with asyncio.timeout(seconds(10)):  # room again: the next heartbeat says so
        while (await client.get("/ready")).status != 200:
            await asyncio.sleep(0.1)
    assert (await (await client.get("/health")).json())["redis"] == "ok"


def blocked_consumers(redis_server: RedisServer) -> int:
    """The connections Redis holds in a blocking XREADGROUP (CLIENT LIST: flag b)."""
    clients = redis_server.command("CLIENT", "LIST").decode().splitlines()
    return sum(" flags=b " in line and " cmd=xreadgroup " in line for line in clients)


async def test_consumers_blocked_on_the_queue_when_redis_is_flushed_make_their_groups_again(
    worker, redis_server, tmp_path, caplog
):
    """FLUSHALL (or a key evicted) answers a read blocked on a stream UNBLOCKED, not NOGROUP: the
    engine's and the writer's consumers must know their groups are gone (not log an error, back off,
    and end in silence), then take work again."""
    caplog.set_level(logging.WARNING, logger="npu_worker.jobs.cluster.consumer")
    client = await worker(queue=redis_server.url)
    await engines_alive(client)
    out = tmp_path / "out"
    before = {"text": "before", "output_path": str(out / "a.wav")}
    assert (await (await client.post("/synth", json=before)).json())["status"] == "ok"
    async with asyncio.timeout(seconds(10)):
        while await asyncio.to_thread(blocked_consumers, redis_server) < 2:  # both wait on their streams
            await asyncio.sleep(0.02)
    caplog.clear()
    assert (await asyncio.to_thread(redis_server.command, "FLUSHALL")).startswith(b"+OK")
    async with asyncio.timeout(seconds(20)):
        while True:  # Loading until the node's next heartbeat shows its engine again
            answer = await client.post("/synth", json={"text": "after", "output_path": str(out / "b.wav")})
            if answer.status == 200:
                break
            assert answer.status == 503, await answer.text()
            await asyncio.sleep(0.1)
    assert (await answer.json())["status"] == "ok" and await asyncio.to_thread((out / "b.wav").is_file)
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert sum("groups are gone" in message for _, message in said) == 2, said  # engine node, writer
    assert not [message for level, message in said if level >= logging.ERROR], said


async def test_a_redis_that_crashed_back_to_an_older_snapshot_reuses_no_seq_a_caller_read(jobs, redis_server):
    """Redis killed after a snapshot loads it back without the last events it acknowledged: the section
    made again was logged at the seqs a caller had read (4, 5), so a stream open across it skipped the
    new `ok` as already seen (and showed another twice). Its seq now jumps past any it had."""
    job = make_job("crash", 2)
    await jobs.create(job, "n1", Start(2, "tone", "cpu", job.id, 24000), max_queue=100, window=2)
    assert await jobs.append(job.id, Progress(0, "synth")) == 2
    assert await jobs.made_ok(job.id, "n1", 0, b"RIFF", ok(0)) == 3
    assert (await asyncio.to_thread(redis_server.command, "SAVE")).startswith(b"+OK")
    assert await jobs.append(job.id, Progress(1, "synth")) == 4
    assert await jobs.made_ok(job.id, "n1", 1, b"RIFF", ok(1)) == 5  # a caller read up to 5
    assert redis_server.process is not None
    redis_server.process.kill()  # a crash: the snapshot is all it comes back with
    await asyncio.to_thread(redis_server.process.wait)
    redis_server.process = None
    await asyncio.to_thread(redis_server.start)
    loaded = await jobs.load(job.id)
    assert loaded is not None and [e.seq for e in loaded.log] == [1, 2, 3]  # 4 and 5 are gone
    again = await jobs.append(job.id, Progress(1, "synth"))  # section 1 is made again
    assert again > 5, again  # was 4: a seq the caller had read, with another event
    from npu_worker.jobs.seq_jump import SEQ_JUMP

    assert again >= 4 + SEQ_JUMP  # or further: Redis's clock (a crash loop, the test below)
    assert await jobs.made_ok(job.id, "n1", 1, b"RIFF", ok(1)) == again + 1
    loaded = await jobs.load(job.id)
    assert (
        loaded is not None
        and loaded.finished
        and [e.seq for e in loaded.log][3:] == [again, again + 1, again + 2]
    )


async def crash_back(redis_server: RedisServer) -> None:
    """Redis killed (SIGKILL) and started again: it loads its last snapshot, nothing after it."""
    assert redis_server.process is not None
    redis_server.process.kill()
    await asyncio.to_thread(redis_server.process.wait)
    redis_server.process = None
    await asyncio.to_thread(redis_server.start)


async def test_a_redis_that_crashed_back_twice_to_one_snapshot_reuses_no_seq_a_caller_read(
    jobs, redis_server
):
    """A crash loop (the OOM killer, a bad host): Redis loads the same snapshot twice. The jump after a
    restart was a constant, so the events made again after the second crash took the very seqs the
    first comeback had given out (1 000 004...), which a caller had read: it dropped them as replays."""
    job = make_job("loop", 3)
    await jobs.create(job, "n1", Start(3, "tone", "cpu", job.id, 24000), max_queue=100, window=3)
    assert await jobs.made_ok(job.id, "n1", 0, b"RIFF", ok(0)) == 2
    assert (await asyncio.to_thread(redis_server.command, "SAVE")).startswith(b"+OK")
    await crash_back(redis_server)
    first = [
        await jobs.append(job.id, Progress(1, "synth")),
        await jobs.made_ok(job.id, "n1", 1, b"RIFF", ok(1)),
    ]
    assert first[1] == first[0] + 1 > 2, first  # a caller read these (no snapshot was taken since)
    await crash_back(redis_server)
    loaded = await jobs.load(job.id)
    assert loaded is not None and [e.seq for e in loaded.log] == [1, 2]  # the first comeback's are gone
    again = await jobs.append(job.id, Progress(1, "synth"))  # section 1 is made again
    assert again > first[1], (first, again)  # was first[0]: a seq the caller had read
    assert await jobs.made_ok(job.id, "n1", 1, b"RIFF", ok(1)) == again + 1
    assert await jobs.made_ok(job.id, "n1", 2, b"RIFF", ok(2)) == again + 2
    loaded = await jobs.load(job.id)
    assert (
        loaded is not None
        and loaded.finished
        and [e.seq for e in loaded.log][2:] == [again + i for i in range(4)]
    )


async def test_a_redis_that_refuses_info_still_logs_every_event(tmp_path):
    """The scripts read Redis's run id (INFO) to jump a job's seq after a restart; a hardened Redis with
    INFO renamed away must still take every event (no jump: as before), not fail every script."""
    from npu_worker.jobs.cluster.store import RedisJobs
    from tests.redis_server import RedisServer, redis_available

    if not redis_available():
        return
    hardened = RedisServer(tmp_path, "--rename-command", "INFO", "")
    await asyncio.to_thread(hardened.start)
    jobs = RedisJobs(hardened.url)
    try:
        await jobs.ensure_groups("n1")
        job = make_job("hardened", 1)
        assert (
            await jobs.create(job, "n1", Start(1, "tone", "cpu", job.id, 24000), max_queue=10, window=1) == 1
        )
        assert await jobs.append(job.id, Progress(0, "synth")) == 2
        assert await jobs.made_ok(job.id, "n1", 0, b"RIFF", ok(0)) == 3
    finally:
        await jobs.close()
        await asyncio.to_thread(hardened.stop)


async def test_a_node_stopping_beside_a_hung_redis_ends_its_previews_together(redis_server, monkeypatch):
    """The drain ended its callers' previews one after another: with Redis hung (SIGSTOP) each end waited
    out its command timeout (5 s): 4 previews took 21 s past the grace, 20 would take 100 s, past a
    service manager's stop timeout (systemd's 90 s). They are ended together (6 s for 4)."""
    from npu_worker.jobs.cluster import store
    from npu_worker.jobs.cluster.follower import Followers
    from npu_worker.jobs.cluster.preview_drain import DELIVERY, drain_previews
    from npu_worker.jobs.subscription import Subscription

    timeout, count = 0.3, 16
    monkeypatch.setattr(store, "COMMAND_TIMEOUT", timeout)  # read as the client is made: keeps this short
    jobs = store.RedisJobs(redis_server.url)
    followers = Followers(jobs)
    for n in range(count):
        job = Job(f"preview{n}", SynthParams(), [Section(0, "x", None)], True, persisted=False)
        await jobs.create(job, "api", Start(1, "tone", "cpu", job.id, 24000), max_queue=100, window=1)
        Subscription(followers.attach(job))  # its caller waits on it (queued: no engine node runs)
    assert redis_server.process is not None
    os.kill(redis_server.process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        await drain_previews(jobs, followers, "api", 0.0, lambda job, event: None)
        waited = time.monotonic() - started
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)
        await followers.close()
        await jobs.close()
    assert waited < DELIVERY + count / 2 * timeout, waited  # one timeout or a few, not one per preview
