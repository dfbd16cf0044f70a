"""A section's `synth` event appended while Redis refuses every write for a moment (a real redis-server made a
replica of no one as the append is sent: READONLY, as when a replica is promoted or demoted). The append was
retried only while Redis was away or full: the refusal ended it, the section ran and ended `ok` with no `synth`
in its job's log (its callers never saw it start), and asyncio logged `Task exception was never retrieved`
with a traceback. Now the append waits, as the section's hand-over and its PCM do, and is logged once Redis
takes writes again, the refusal said as it starts and as it ends."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.protocol import Progress
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds


async def test_a_synth_appended_while_redis_refuses_writes_is_logged_once_it_takes_them(
    worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, monkeypatch: Any
) -> None:
    append = RedisJobs.append
    master = dead_port()  # held: no other test's server can take the port and be copied
    turned: list[bool] = []

    async def refused_from_the_synth(self: RedisJobs, job_id: str, event: Any) -> int:
        if not turned and isinstance(event, Progress) and event.status == "synth":
            turned.append(True)  # Redis refuses this append, and every write after it, until lifted
            await self.redis.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
        return await append(self, job_id, event)

    monkeypatch.setattr(RedisJobs, "append", refused_from_the_synth)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    caplog.set_level(logging.WARNING)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "refused"}]})
    job_id = (await answer.json())["job_id"]
    try:
        async with asyncio.timeout(seconds(20)):  # a part of the node met the refusal (its log: polled)
            while "refuses every write for now" not in caplog.text:
                await asyncio.sleep(0.05)
    finally:
        redis_server.command("REPLICAOF", "NO", "ONE")
    async with asyncio.timeout(seconds(30)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    assert turned == [True]
    assert [e["idx"] for e in events if e.get("status") == "synth"] == [0], events
    assert events[-1]["event"] == "done" and events[-1]["fail_count"] == 0, events
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == [], caplog.text
    master.close()
