"""A section running while Redis refuses every write for a moment (a real redis-server made a replica of no one:
READONLY, as when a replica is promoted or demoted). The task that keeps the section's claim fresh (its item's
idle time reset every third of `--claim-timeout`) waited out an outage or a full Redis only: the refusal ended
it (`Task exception was never retrieved`), and once Redis took writes again the item aged as a dead node's,
for another engine node to take and run the section a second time while this one still ran it. Now the claim
is kept fresh again once Redis takes writes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.jobs.cluster.keys import BATCH, ENGINES, FIRST, job_key
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds
from tests.tone_engine import ToneEngine

CLAIM_TIMEOUT = 1.0  # s: the claim is touched every third of it


async def idle_ms(redis: aioredis.Redis) -> int | None:
    """How long the running section's item has gone untouched (XPENDING), None before it is claimed."""
    for stream in (FIRST, BATCH):
        rows = await redis.xpending_range(stream, ENGINES, min="-", max="+", count=1)
        if rows:
            return int(rows[0]["time_since_delivered"])
    return None


async def until_idle(redis: aioredis.Redis, holds: Any) -> None:
    async with asyncio.timeout(seconds(20)):  # (XPENDING is the only sign: polled)
        while (idle := await idle_ms(redis)) is None or not holds(idle):
            await asyncio.sleep(0.05)


async def test_a_section_running_while_redis_refuses_writes_keeps_its_claim_once_it_takes_them(
    worker: Any, redis_server: Any, tmp_path: Any
) -> None:
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section runs until the test lets it end
    state = str(tmp_path / "node")
    node = await worker(engine=engine, role="both", state_dir=state, queue=redis_server.url, claim_timeout=1)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "kept"}]})
    job_id = (await answer.json())["job_id"]
    master = dead_port()  # held: no other test's server can take the port and be copied
    async with aioredis.Redis.from_url(redis_server.url) as redis:
        try:
            await until_idle(redis, lambda idle: True)  # claimed: the section runs
            redis_server.command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
            try:  # no touch is taken for longer than the claim timeout: the keeper met the refusal
                await until_idle(redis, lambda idle: idle > 1500 * CLAIM_TIMEOUT)
            finally:
                redis_server.command("REPLICAOF", "NO", "ONE")
            await until_idle(redis, lambda idle: idle < 1000 * CLAIM_TIMEOUT)  # touched again
        finally:
            engine.gate.set()
        async with asyncio.timeout(seconds(30)):  # the job ends before Redis stops (its record: polled)
            while await redis.hget(job_key(job_id), "done") == b"0":
                await asyncio.sleep(0.05)
    master.close()
