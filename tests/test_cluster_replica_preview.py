"""A Redis that stays a replica (a real redis-server made one of a master that is not there: READONLY on
every write) while a `/synth` waits for its section: past `WRITES_REFUSED_LIMIT` (60 s; 2 s here) the node
ends the streams it follows, and the waiting caller was told 404 `JobNotFound: job … is gone from the
shared queue; send it again` (`stream_lost`): its job was not gone, only waiting for Redis to take writes.
Now it is the 503 `QueueUnavailable` a re-attach gets, naming why."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.jobs.cluster import heartbeat
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def test_a_synth_waiting_while_redis_stays_a_replica_is_told_why_not_that_its_job_is_gone(
    redis_server: Any, worker: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(heartbeat, "WRITES_REFUSED_LIMIT", 2.0)  # (60 s in production)
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section runs until the test lets it end
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    master = dead_port()
    async with aioredis.Redis.from_url(redis_server.url) as admin:
        try:
            synth = asyncio.ensure_future(
                node.post("/synth", json={"text": "held", "output_path": str(tmp_path / "s.wav")})
            )
            await until(lambda: engine.calls or synth.done(), "the section to start")
            await admin.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
            engine.gate.set()  # its hand-over now waits for Redis to take writes
            async with asyncio.timeout(seconds(30)):
                answer = await synth
                told = (answer.status, await answer.json())
        finally:
            await admin.execute_command("REPLICAOF", "NO", "ONE")
            master.close()
            engine.gate.set()
    assert told[0] == 503, told
    assert told[1]["error"].startswith("QueueUnavailable: Redis has refused every write for "), told
