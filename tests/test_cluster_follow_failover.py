"""A caller following a running job (`GET /jobs/{id}/events`) while Redis is made a replica for a moment, as in a
failover (a real redis-server; REPLICAOF of no one, then NO ONE). Redis answers a read blocked at that instant
`UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)`: the node's
follower of the job ended on it (`Task exception was never retrieved`), and its callers' streams got nothing
more and never ended, the job's `done` included. Now the follower reads again, as after an outage."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.jobs.cluster.keys import job_key, log_key
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds
from tests.tone_engine import ToneEngine


def blocked_reads(redis_server: Any) -> int:
    """The connections Redis holds in a blocking XREAD (CLIENT LIST: flag b): the followers'."""
    clients = redis_server.command("CLIENT", "LIST").decode().splitlines()
    return sum(" flags=b " in line and " cmd=xread " in line for line in clients)


async def test_a_caller_following_a_job_while_redis_is_made_a_replica_gets_its_done(
    worker: Any, redis_server: Any, tmp_path: Any
) -> None:
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section runs until the test lets it end
    node = await worker(engine=engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "followed"}]})
    job_id = (await answer.json())["job_id"]
    events = await node.get(f"/jobs/{job_id}/events")
    master = dead_port()  # held: no other test's server can take the port and be copied
    try:
        async with asyncio.timeout(seconds(20)):  # the follower waits in its XREAD (no event says so)
            while not blocked_reads(redis_server):
                await asyncio.sleep(0.05)
        redis_server.command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))  # its read: UNBLOCKED
    finally:
        redis_server.command("REPLICAOF", "NO", "ONE")
        engine.gate.set()
    async with asyncio.timeout(seconds(30)):
        said = [json.loads(line) async for line in events.content]
    assert said[-1]["event"] == "done" and said[-1]["fail_count"] == 0, said
    master.close()


async def test_a_caller_following_a_job_whose_log_is_replaced_by_a_key_not_of_ours_sees_its_stream_end(
    worker: Any, redis_server: Any, tmp_path: Any
) -> None:
    """A job's log replaced meanwhile by a value of another type (any local process can write to Redis):
    Redis answers the follower's read WRONGTYPE, which ended it and left the caller's stream open for
    ever; now the stream ends, as a lost job's."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section runs until the test ends
    node = await worker(engine=engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "followed"}]})
    job_id = (await answer.json())["job_id"]
    events = await node.get(f"/jobs/{job_id}/events")
    try:
        async with asyncio.timeout(seconds(20)):  # the follower waits in its XREAD (no event says so)
            while not blocked_reads(redis_server):
                await asyncio.sleep(0.05)
        redis_server.command("DEL", log_key(job_id))
        redis_server.command("SET", log_key(job_id), "planted")  # its next read: WRONGTYPE
        async with asyncio.timeout(seconds(30)):
            said = [json.loads(line) async for line in events.content]
    finally:
        engine.gate.set()
    assert said and said[-1]["event"] != "done", said
    async with aioredis.Redis.from_url(redis_server.url) as redis, asyncio.timeout(seconds(30)):
        while await redis.hget(job_key(job_id), "done") == b"0":  # it ends before Redis stops (polled)
            await asyncio.sleep(0.05)
