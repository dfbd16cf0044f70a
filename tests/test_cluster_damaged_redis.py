"""Values planted in or damaged by hand in Redis (another local process can write any key): a node
logs and drops them, refuses with a named 503, or repairs them; it never stops its loops nor answers 500."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterator

import pytest
from redis.exceptions import ResponseError

from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.protocol import Progress
from tests.test_cluster_store import create, make_job, ok
from tests.timing import seconds, until


async def test_values_planted_in_redis_are_dropped_and_the_node_keeps_working(worker, redis_server, tmp_path):
    """Any local process can write to Redis: a work item, a writer entry, a job record or a heartbeat
    not of the worker's making is logged and dropped; the node's loops go on and /health answers."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY

    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    node = client.app[SCHEDULER_KEY].node
    planter = aioredis.from_url(redis_server.url)
    await planter.set("npu:job:wrongtype", "x")
    await planter.hset("npu:job:badspec", mapping={"spec": "{not json", "done": 0})
    for fields in (
        {"job": "nopos"},
        {"foo": "bar"},
        {"job": "x", "pos": "notanint"},
        {"job": b"\xff\xfe", "pos": 0},
        {"job": "wrongtype", "pos": 0},
        {"job": "badspec", "pos": 0},
    ):
        await planter.xadd("npu:q:first", fields)
    await planter.xadd(f"npu:ready:{node}", {"job": "x"})
    await planter.xadd(f"npu:ready:{node}", {"job": "badspec", "idx": 0, "duration": 1, "elapsed": 1})
    await planter.set("npu:wav:badspec:0", b"RIFF")
    await planter.hset(
        "npu:nodes",
        mapping={"a": "not json", "b": "[1]", "c": '{"seen": "x", "role": "engine"}', "d": '{"seen": 1e300}'},
    )
    await planter.hset("npu:nodes", "e", json.dumps({"role": "engine", "seen": 1e300, "backend": "x"}))
    await planter.aclose()
    await asyncio.sleep(1.5)  # the loops read what was planted
    health = await client.get("/health")
    assert health.status == 200 and (await health.json())["cluster"]["engines_alive"] == 1
    response = await client.post("/synth", json={"text": "hello", "output_path": str(tmp_path / "s.wav")})
    assert (await response.json())["status"] == "ok"
    accepted = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "one"}]})).json()
    lines = [
        json.loads(line) async for line in (await client.get(f"/jobs/{accepted['job_id']}/events")).content
    ]
    assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 1


async def test_a_cancel_still_reaches_the_running_section_after_a_message_not_of_ours(worker, redis_server):
    """Any local process can publish on the cancel channel: bytes that are no job id must not end the
    node's listener, or a DELETE would no longer stop the section running there."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY
    from tests.tone_engine import ToneEngine

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05)
    client = await worker(engine, queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    planter = aioredis.from_url(redis_server.url)
    assert await planter.publish("npu:cancel", b"\xff\xfe") == 1
    await planter.aclose()
    node = client.app[SCHEDULER_KEY].engine_node
    body = {"sections": [{"text": "가" * 500}]}  # 10 s of audio, made in 10 s
    accepted = await (await client.post("/synth_batch?async=1", json=body)).json()
    async with asyncio.timeout(seconds(5)):
        while node.running is None:
            await asyncio.sleep(0.02)
    assert (await client.delete(f"/jobs/{accepted['job_id']}")).status == 200
    async with asyncio.timeout(seconds(5)):  # stopped at its next chunk, not 10 s later
        while node.running is not None:
            await asyncio.sleep(0.02)


async def test_a_nodes_key_of_the_wrong_type_does_not_stop_the_heartbeat_for_good(
    worker, redis_server, caplog
):
    """`npu:nodes` replaced by a string (WRONGTYPE) for a while, `npu:pending` that is no count: /health
    still answers, and once the key is gone the node's heartbeat is seen again (a heartbeat loop that
    died left the node dead to all)."""
    import redis.asyncio as aioredis

    client = await worker(queue=redis_server.url, claim_timeout=1.0)

    async def engines_alive() -> int:
        response = await client.get("/health")
        assert response.status == 200
        return int((await response.json())["cluster"]["engines_alive"])

    async with asyncio.timeout(seconds(20)):
        while await engines_alive() != 1:
            await asyncio.sleep(0.05)
    planter = aioredis.from_url(redis_server.url)
    caplog.set_level(logging.ERROR, logger="npu_worker.jobs.cluster.heartbeat")
    await planter.set("npu:nodes", "not a hash")
    await planter.set("npu:pending", "not a count")
    await until(lambda: "Redis answered WRONGTYPE" in caplog.text, "a heartbeat to meet them")
    assert await engines_alive() == 1  # the last view stands
    await planter.delete("npu:nodes")
    await planter.aclose()
    async with asyncio.timeout(seconds(5)):
        while await engines_alive() != 1:
            await asyncio.sleep(0.1)


async def test_a_job_whose_log_holds_an_entry_not_of_ours_ends_its_streams_and_is_not_a_500(
    worker, redis_server
):
    """An entry planted in a job's log that is no event: the job reads as gone (404 on its calls, left
    out of GET /jobs, forgotten by retention) and a stream following it ends, instead of 500s and a
    follower that died while its listener waits forever."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY
    from tests.tone_engine import ToneEngine

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05)
    client = await worker(engine, queue=redis_server.url, claim_timeout=1.0, max_jobs_kept=1)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    body = {"sections": [{"text": "가" * 150}] * 2}  # 3 s of audio each, made in 3 s
    job_id = (await (await client.post("/synth_batch?async=1", json=body)).json())["job_id"]
    events = await client.get(f"/jobs/{job_id}/events")
    assert json.loads(await events.content.readline())["event"] == "start"
    planter = aioredis.from_url(redis_server.url)
    await planter.xadd(f"npu:log:{job_id}", {"e": "garbage"}, id="0-999")
    async with asyncio.timeout(seconds(5)):  # the stream ends (without `done`), not heartbeats forever
        lines = [json.loads(line) async for line in events.content]
    assert all(line["event"] != "done" for line in lines)
    assert (await client.get(f"/jobs/{job_id}/status")).status == 404
    assert (await client.get("/jobs")).status == 200
    scheduler = client.app[SCHEDULER_KEY]
    await planter.zadd(f"npu:finished:{scheduler.node}", {job_id: 1.0, "other": 2.0})
    await scheduler.retention_sweeper.sweep()  # over --max-jobs-kept 1: the job is due, and its record goes
    assert await planter.exists(f"npu:job:{job_id}", f"npu:log:{job_id}") == 0
    await planter.aclose()
    await client.close()  # while Redis is up (the section that was running ends at once)


async def test_a_retention_pass_that_redis_refuses_is_skipped_not_the_end_of_retention(worker, redis_server):
    """The node's finished list replaced by a string (WRONGTYPE): that pass is skipped with an error in
    the log (it raised, ending the retention loop: Redis would then keep every job for good); once the
    key is of ours again, the next pass works."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY

    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    scheduler = client.app[SCHEDULER_KEY]
    planter = aioredis.from_url(redis_server.url)
    key = f"npu:finished:{scheduler.node}"
    with logged_by_this_task("npu_worker.jobs.cluster.retention") as said:
        await planter.set(key, "not a sorted set")
        await scheduler.retention_sweeper.sweep()  # raised ResponseError before
        assert any(line.startswith("retention skipped: Redis answered WRONGTYPE") for line in said), said
        await planter.delete(key)
        said.clear()
        await scheduler.retention_sweeper.sweep()
        assert said == []
    await planter.aclose()


@contextlib.contextmanager
def logged_by_this_task(logger: str) -> Iterator[list[str]]:
    """What `logger` says from the calling task only. The node's own retention loop makes its first
    pass as the node starts, in a task of its own: under load it read the planted key too and said
    so after the test had cleared the log for the pass that should work (1 run in a batch of 57 tests
    under load)."""
    task, said = asyncio.current_task(), list[str]()

    class Own(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            with contextlib.suppress(RuntimeError):  # a thread without a loop: not this task
                if asyncio.current_task() is task:
                    said.append(record.getMessage())

    handler, log = Own(), logging.getLogger(logger)
    log.addHandler(handler)
    try:
        yield said
    finally:
        log.removeHandler(handler)


async def test_a_log_entry_planted_with_a_high_id_leaves_no_job_half_updated(jobs, redis_server):
    """`XADD npu:log:<id> 0-999 e x` made every later event's XADD fail after the script's first writes
    (Redis does not roll a script back): the section was final with no event, `pending` never released,
    the job never ended. Now its events go past the planted id and the job ends; a log that is no stream
    at all still lets the job's counts and end through."""
    import redis.asyncio as aioredis

    planter = aioredis.from_url(redis_server.url)
    await create(jobs, make_job("high", 2))
    await create(jobs, make_job("notastream", 1))
    await create(jobs, make_job("future", 1))
    await planter.xadd("npu:log:high", {"e": "x"}, id="0-999")
    await planter.delete("npu:log:notastream")
    await planter.set("npu:log:notastream", "x")
    await planter.xadd("npu:log:future", {"e": "x"}, id="5-0")
    assert await jobs.append("high", Progress(0, "synth")) == 1000
    assert await jobs.final("high", 0, ok(0), ok=True, node="n1", advance=False) == 1001
    assert await jobs.final("high", 1, ok(1), ok=True, node="n1", advance=False) == 1002
    ids = [entry_id for entry_id, _ in await planter.xrange("npu:log:high")]
    assert ids == [b"0-1", b"0-999", b"0-1000", b"0-1001", b"0-1002", b"0-1003"]  # the last one is done
    assert await jobs.made_ok("notastream", "n1", 0, b"wav", ok(0)) == 2
    assert await jobs.final("future", 0, ok(0), ok=True, node="n1", advance=False) == 2
    for job_id in ("high", "notastream", "future"):
        assert await planter.hget(f"npu:job:{job_id}", "done") == b"1"
    assert int(await planter.get("npu:pending")) == 0
    await planter.aclose()


async def test_a_pending_counter_not_of_ours_is_recounted_not_a_failed_submit(jobs, redis_server):
    """`SET npu:pending abc` made every submit a 500 (and every final fail halfway): the counter is
    recounted from the jobs under way, whatever was written there."""
    import redis.asyncio as aioredis

    planter = aioredis.from_url(redis_server.url)
    await create(jobs, make_job("a", 3))
    await jobs.final("a", 0, ok(0), ok=True, node="n1", advance=False)
    await planter.set("npu:pending", "abc")
    assert await create(jobs, make_job("b", 4)) == 1
    assert int(await planter.get("npu:pending")) == 6  # 2 of a, 4 of b
    await planter.delete("npu:pending")
    await planter.hset("npu:pending", "x", "y")
    assert await jobs.final("a", 1, ok(1), ok=True, node="n1", advance=False) == 3
    assert int(await planter.get("npu:pending")) == 5
    await planter.set("npu:pending", "1e3")
    assert await jobs.cancel("b", "n1")
    assert int(await planter.get("npu:pending")) == 1
    await planter.aclose()


async def test_sections_of_a_job_whose_record_went_stop_counting_toward_the_bound(jobs, redis_server):
    """A job's record evicted (a `maxmemory` policy) or deleted by hand while its sections waited held its
    share of `--max-queue` for good: enough of them and every submit was refused. The recount that every
    node runs once a minute gives it back, and leaves a true count alone."""
    import redis.asyncio as aioredis

    planter = aioredis.from_url(redis_server.url)
    await create(jobs, make_job("kept", 3), max_queue=10)
    await create(jobs, make_job("evicted", 6), max_queue=10)
    await jobs.final("kept", 0, ok(0), ok=True, node="n1", advance=False)
    assert await jobs.recount() is None
    await planter.delete("npu:job:evicted", "npu:log:evicted")
    assert await create(jobs, make_job("refused", 3), max_queue=10) < 0
    assert await jobs.recount() == ("8", 2)
    assert await create(jobs, make_job("taken", 3), max_queue=10) == 1
    assert await jobs.recount() is None
    await planter.aclose()


async def test_a_queue_key_replaced_by_another_type_is_a_503_and_a_work_stream_is_repaired(
    worker, redis_server
):
    """`SET npu:q:first x` made every submit a 500 that left a job recorded but never queued (`pending`
    counted it for good), and every engine loop retried WRONGTYPE for ever. Now the submit is refused
    whole with a named 503, and the nodes remove a work stream's key (it holds no work) and carry on."""
    import redis.asyncio as aioredis

    planter = aioredis.from_url(redis_server.url)
    jobs = RedisJobs(redis_server.url)
    for key in ("npu:q:first", "npu:jobs"):  # before any node runs: a node repairs q:first at once
        await planter.set(key, "x")
        with pytest.raises(ResponseError):
            await create(jobs, make_job("half", 2))
        assert not await planter.exists("npu:job:half", "npu:log:half", "npu:pending")
        await planter.delete(key)
    await jobs.close()
    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    body = {"sections": [{"text": "one"}]}
    await planter.set("npu:jobs", "x")
    refused = await client.post("/synth_batch?async=1", json=body)
    assert refused.status == 503 and (await refused.json())["error"].startswith("QueueUnavailable")
    listed = await client.get("/jobs")  # was a 500 with Redis's traceback
    assert listed.status == 503 and (await listed.json())["error"].startswith("QueueUnavailable")
    await planter.delete("npu:jobs")
    await planter.set("npu:q:first", "x")
    async with asyncio.timeout(seconds(10)):
        while (response := await client.post("/synth_batch?async=1", json=body)).status != 200:
            await asyncio.sleep(0.2)
        job_id = (await response.json())["job_id"]
        lines = [json.loads(line) async for line in (await client.get(f"/jobs/{job_id}/events")).content]
    assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 1
    await planter.aclose()


async def test_a_heartbeat_naming_a_sample_rate_no_engine_has_is_left_out(worker, redis_server, tmp_path):
    """An api node reports, and encodes speech at, the first live engine node's sample rate: a beat
    planted with a rate of 2**40 made every OpenAI wav answer a 500 (the wav header cannot hold it)."""
    import redis.asyncio as aioredis

    cluster = {"queue": redis_server.url}
    await worker(role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    api = await worker(role="api", state_dir=str(tmp_path / "api"), **cluster)
    planter = aioredis.from_url(redis_server.url)
    try:
        now, _micros = await planter.time()
        beat = {"role": "engine", "backend": "tone", "device": "cpu", "precision": "fp32", "model": "tone"}
        beat |= {"sample_rate": 2**40, "seen": now + 4}  # first by name, alive for the test
        await planter.hset("npu:nodes", "0-planted", json.dumps(beat))
        health = await (await api.get("/health")).json()
        assert health["sample_rate"] == 24000, health
        body = {"model": "tts-1", "input": "hello", "voice": "default", "response_format": "wav"}
        async with api.post("/v1/audio/speech", json=body) as answer:
            assert answer.status == 200, await answer.text()
            assert (await answer.read())[:4] == b"RIFF"
    finally:
        await planter.aclose()


async def test_a_cancel_published_for_a_job_that_goes_on_loses_none_of_its_sections(worker, redis_server):
    """Any local process can publish a job's id on the cancel channel (and a Redis that crashed back
    forgets the cancel it had published): the node stopped the running section and acknowledged it
    unmade, and its cached job stayed flagged, so each later section it took was dropped at once: the
    job, never ended, waited for ever."""
    import redis.asyncio as aioredis

    from npu_worker.app_keys import SCHEDULER_KEY
    from tests.tone_engine import ToneEngine

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.02)
    client = await worker(engine, queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    node = client.app[SCHEDULER_KEY].engine_node
    body = {"sections": [{"idx": i, "text": "가" * 100} for i in range(3)]}  # 0.8 s each
    job_id = (await (await client.post("/synth_batch?async=1", json=body)).json())["job_id"]
    async with asyncio.timeout(seconds(5)):
        while node.running is None:
            await asyncio.sleep(0.02)
    async with aioredis.from_url(redis_server.url) as planter:
        assert await planter.publish("npu:cancel", job_id) == 1
    async with asyncio.timeout(seconds(15)):
        while (await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != "done":
            await asyncio.sleep(0.1)
    result = await (await client.get(f"/jobs/{job_id}/result")).json()
    assert result["ok_count"] == 3, result


async def test_a_section_wav_key_of_another_type_is_a_503_not_a_500(worker, redis_server, tmp_path):
    """A finished section's wav key replaced by another type (a hash): `GET .../audio` and its HEAD were
    a 500 with Redis's WRONGTYPE traceback (the length looked up, as the whole wav fetched was); now a
    named 503, as every other Redis refusal, and the node's log says which key."""
    import redis.asyncio as aioredis

    client = await worker(queue=redis_server.url, claim_timeout=1.0)
    async with asyncio.timeout(seconds(20)):
        while (await (await client.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    body = {"sections": [{"idx": 0, "text": "one", "output_path": str(tmp_path / "0.wav")}], "stream": False}
    job_id = (await (await client.post("/synth_batch", json=body)).json())["job_id"]
    lines = [json.loads(line) async for line in (await client.get(f"/jobs/{job_id}/events")).content]
    assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 1
    assert (await client.get(f"/jobs/{job_id}/sections/0/audio")).status == 200
    planter = aioredis.from_url(redis_server.url)
    await planter.delete(f"npu:wav:{job_id}:0")
    await planter.hset(f"npu:wav:{job_id}:0", "x", "y")
    await planter.aclose()
    for method in ("GET", "HEAD"):
        refused = await client.request(method, f"/jobs/{job_id}/sections/0/audio")
        assert refused.status == 503, (method, refused.status, await refused.text())
    refused = await client.get(f"/jobs/{job_id}/sections/0/audio")
    assert (await refused.json())["error"].startswith("QueueUnavailable: ")
