"""Redis refusing every write for a moment (here a replica: READONLY; MISCONF, BUSY alike) as the engine
node hands a synthesised section over (a real redis-server, a real worker in process): the engine thread's
journal retried an outage but not a refusal, so the section failed with `EngineError: ReadOnlyError: You
can't write against a read only replica.` though waiting mended it. Now it waits, as for an outage."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from npu_worker.jobs.cluster.store import RedisJobs
from tests.timing import seconds


def dead_port() -> socket.socket:
    """A port bound and never listened on, held for the test: no other test's server can take it (a
    port closed again could be, and the refusing replica would then copy that server's data)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


async def test_a_section_handed_over_while_redis_refuses_writes_is_ok_after(
    worker: Any, redis_server: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    made_ok = RedisJobs.made_ok_ending
    master = dead_port()
    refused: list[str] = []

    async def first_refused(self: RedisJobs, *args: Any, **kwargs: Any) -> Any:
        if refused:
            return await made_ok(self, *args, **kwargs)
        await self.redis.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))  # (no one)
        try:
            return await made_ok(self, *args, **kwargs)
        except Exception as exc:
            refused.append(type(exc).__name__)
            raise
        finally:
            await self.redis.execute_command("REPLICAOF", "NO", "ONE")

    monkeypatch.setattr(RedisJobs, "made_ok_ending", first_refused)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "refused"}]})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(30)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    assert refused == ["ReadOnlyError"]
    finals = [e for e in events if e["event"] in ("progress", "error") and e.get("status") in ("ok", "fail")]
    assert [(e["event"], e["status"]) for e in finals] == [("progress", "ok")], events
    assert events[-1]["event"] == "done" and events[-1]["fail_count"] == 0, events
    master.close()
