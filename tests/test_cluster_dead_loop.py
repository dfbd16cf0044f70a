"""A Redis node whose own loop (heartbeat, engine, writer, retention, cancel listener) ended on an
exception it did not expect (a real redis-server, a real worker in process): it was only logged, so the
node's `/health` said 200, its beat went on naming its engine, and its peers never counted it out."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.keys import NODES
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def health_until_not_ok(node: Any) -> tuple[int, dict[str, Any]]:
    """`/health` polled (no event says a loop ended to a caller) until it is no longer 200."""
    async with asyncio.timeout(seconds(20)):
        while True:
            answer = await node.get("/health")
            if answer.status != 200:
                return answer.status, await answer.json()
            await asyncio.sleep(0.1)


class InterruptFails(ToneEngine):
    """An engine whose call in flight cannot be stopped (a sovits upstream gone): `interrupt` raises,
    and the cancel listener that calls it ends."""

    def interrupt(self, _clear: bool) -> None:
        raise RuntimeError("the upstream call cannot be stopped")


async def test_a_node_loop_that_ended_on_a_bug_fails_its_health_and_its_beat(worker, redis_server, tmp_path):
    """The cancel listener ends (its engine's `interrupt` raised): /health 500 `fail`, /ready 503, a
    submission refused in the same words, and its beat carries the failure as a failed engine's, without
    a backend, so an api node counts it out (`engines_failed`, `info`); the beat itself goes on."""
    engine = InterruptFails()
    engine.gate = threading.Event()  # the section runs until the test lets it go
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    try:
        answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "held"}]})
        job_id = (await answer.json())["job_id"]
        async with asyncio.timeout(seconds(20)):  # its section runs (no event reaches the test)
            while scheduler.engine_node.running is None:
                await asyncio.sleep(0.02)
        assert (await node.delete(f"/jobs/{job_id}")).status == 200
        status, said = await health_until_not_ok(node)
        async with aioredis.Redis.from_url(redis_server.url) as client, asyncio.timeout(seconds(20)):
            while True:  # the next beat (one a second)
                beat = json.loads((await client.hget(NODES, scheduler.node)) or b"{}")
                if "load_error" in beat:
                    break
                await asyncio.sleep(0.1)
    finally:
        engine.gate.set()
    wanted = "InternalError: this node's cancel listener loop ended on RuntimeError; restart the node"
    assert (status, said["status"]) == (500, "fail") and said["error"].startswith(wanted), said
    assert "backend" not in beat and beat["load_error"].startswith(wanted), beat
    ready = await node.get("/ready")
    assert ready.status == 503 and (await ready.json())["reason"].startswith("the worker cannot serve: ")
    refused = await node.post("/synth_batch", json={"sections": [{"idx": 0, "text": "after"}]})
    assert refused.status == 500 and (await refused.json())["error"].startswith(wanted)
