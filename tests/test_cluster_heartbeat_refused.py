"""Redis refusing every write for longer than a node's beat may age (a real redis-server made a replica of a
master that is not there: READONLY; a full Redis alike): no node can write its beat, so every view counted
every node out 5 s in, and a live node's /health said no engine was alive. Now a node that meets the
refusal counts a node alive within 5 s of when the refusals began, reading the view still."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.heartbeat import ALIVE_WITHIN
from npu_worker.jobs.cluster.keys import NODES
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds


async def _beat_age(planter: aioredis.Redis, node: str) -> float:
    """How old the node's beat in Redis is, by Redis's clock (the one beats are stamped with)."""
    seconds_now, micros = await planter.time()
    return seconds_now + micros / 1e6 - json.loads(await planter.hget(NODES, node))["seen"]


async def test_a_node_whose_beat_redis_refuses_stays_in_view(
    worker: Any, redis_server: Any, tmp_path: Any
) -> None:
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    name = node.app[SCHEDULER_KEY].node
    master = dead_port()
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        async with asyncio.timeout(seconds(10)):
            while (await (await node.get("/health")).json())["cluster"]["engines_alive"] != 1:
                await asyncio.sleep(0.05)
        await planter.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
        try:
            async with asyncio.timeout(seconds(30)):  # the beat ages past what a live one may (polled)
                while await _beat_age(planter, name) <= ALIVE_WITHIN + 1.0:
                    await asyncio.sleep(0.1)
            health = await (await node.get("/health")).json()
        finally:
            await planter.execute_command("REPLICAOF", "NO", "ONE")
            master.close()
    assert health["cluster"]["engines_alive"] == 1, health
    assert [n["node"] for n in health["cluster"]["nodes"]] == [name], health
