"""A Redis that stays a replica (a real redis-server made one of a master that is not there: READONLY on
every write) while a section is handed over: the engine thread waits, as it should (the audio is kept and
delivered once Redis takes writes), but the job's caller heard heartbeats and nothing else for as long as it
lasted, and a re-attach was taken as ever. Now, past `WRITES_REFUSED_LIMIT` (60 s; 2 s here) the streams the
node follows end without `done` and a re-attach is a 503 `QueueUnavailable` naming why; once Redis takes
writes again the job ends as it would have."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.jobs.cluster import heartbeat
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_a_redis_that_stays_a_replica_ends_the_streams_and_refuses_a_re_attach_by_name(
    worker: Any, redis_server: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(heartbeat, "WRITES_REFUSED_LIMIT", 2.0, raising=False)  # (60 s in production)
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section runs until the test lets it end
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "held"}]})
    job_id = (await answer.json())["job_id"]
    master = dead_port()
    async with aioredis.Redis.from_url(redis_server.url) as admin:
        try:
            stream = await node.get(f"/jobs/{job_id}/events")
            events = []
            async with asyncio.timeout(seconds(30)):
                async for line in stream.content:
                    events.append(json.loads(line))
                    if events[-1].get("status") == "synth":  # the section runs: Redis now refuses writes
                        await admin.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
                        engine.gate.set()
            again = await node.get(f"/jobs/{job_id}/events")
            refused = (again.status, await again.json())
        finally:
            await admin.execute_command("REPLICAOF", "NO", "ONE")
            master.close()
        engine.gate.set()
    assert events[-1]["event"] != "done", events
    assert refused[0] == 503, refused
    assert refused[1]["error"].startswith("QueueUnavailable: Redis has refused every write for "), refused
    async with asyncio.timeout(seconds(30)):  # Redis takes writes again: the job ends as it would have
        while (after := await node.get(f"/jobs/{job_id}/events")).status != 200:
            await asyncio.sleep(0.1)
        ended = [json.loads(line) async for line in after.content]
    assert [(e["event"], e.get("status")) for e in ended[-2:]] == [("progress", "ok"), ("done", None)], ended
