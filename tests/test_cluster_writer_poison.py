"""A poison entry in a node's writers' stream (a real redis-server, a real worker in process): one the
writer cannot handle ended its loop, which started again, met the same pending entry first and ended again
(pauses doubling to 60 s, a traceback each time, the node failed meanwhile), or had Redis answer an error
the loop retried for ever; either way the entries behind it waited. Now that entry alone fails: it is
acknowledged, its section gets an `error` its caller reads, one log line says so, and the stream goes on."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.keys import WRITERS, job_key, log_key, ready_key, wav_key
from npu_worker.jobs.cluster.store import RedisJobs
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds

COUNTS = {"total": 1, "seq": 1, "next": 1, "ok": 0, "fail": 0, "began": 0, "done": 0}  # as a record's


def spec(job_id: str, section_idx: Any = 0) -> str:
    """A job's spec as the worker writes one (no file to write), but for its section's `idx`."""
    section = {"idx": section_idx, "text": "planted", "output_path": None}
    body = {"id": job_id, "node": "x", "params": {}, "sections": [section], "preview": False}
    return json.dumps({**body, "created_at": 0.0})


async def plant(planter: aioredis.Redis, stream: str, poison: str) -> None:
    """The poison job's record, audio and entry, then a sound job's entry behind it."""
    record = {**COUNTS, "spec": spec("poison", [0] if poison == "a section idx that is a list" else 0)}
    await planter.hset(job_key("poison"), mapping=record)
    if poison == "audio under a key of another type":
        await planter.rpush(wav_key("poison", 0), b"RIFF")  # GET answers WRONGTYPE
    else:
        await planter.set(wav_key("poison", 0), b"RIFF")
    await planter.hset(job_key("sound"), mapping={**COUNTS, "spec": spec("sound")})
    await planter.set(wav_key("sound", 0), b"RIFF")
    for job_id in ("poison", "sound"):
        await planter.xadd(stream, {"job": job_id, "idx": 0, "duration": 1, "elapsed": 1})


async def logged_events(planter: aioredis.Redis, job_id: str) -> list[dict[str, Any]]:
    return [json.loads(fields[b"e"]) for _, fields in await planter.xrange(log_key(job_id))]


@pytest.mark.parametrize("poison", ["a section idx that is a list", "audio under a key of another type"])
async def test_a_poison_writer_entry_fails_its_section_alone(
    worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, poison: str
) -> None:
    """Before: a list idx ended the writer loop on TypeError (node failed, the entry met again at each
    start); a WRONGTYPE answer was retried for ever (the entry never acknowledged)."""
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    scheduler.loops.first_pause = seconds(600)  # a loop that ends stays down: the test sees it
    failures: list[Any] = []
    told = scheduler.loops._failed
    scheduler.loops._failed = lambda failure: (failures.append(failure), told(failure))
    stream = ready_key(scheduler.node)
    caplog.set_level(logging.WARNING, logger="npu_worker.jobs.cluster")
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await plant(planter, stream, poison)
        async with asyncio.timeout(seconds(20)):  # the writer reads both (no event says so: polled)
            while not failures and (await planter.xlen(stream) or not await logged_events(planter, "sound")):
                await asyncio.sleep(0.05)
        pending = (await planter.xpending(stream, WRITERS))["pending"]
        poisoned, sound = await logged_events(planter, "poison"), await logged_events(planter, "sound")
    assert failures == [] and scheduler.loop_failure is None
    assert pending == 0
    assert [(e["event"], e.get("idx")) for e in poisoned] == [("error", 0), ("done", None)], poisoned
    assert poisoned[0]["error"].startswith("InternalError: the writer could not handle this section's entry ")
    assert poisoned[1]["fail_count"] == 1
    assert [e["event"] for e in sound] == ["progress", "done"] and sound[0]["status"] == "ok", sound
    said = [r for r in caplog.records if r.name.endswith("writer") and "dropped entry" in r.getMessage()]
    assert len(said) == 1 and said[0].exc_info is None, caplog.text
    assert "'poison'" in said[0].getMessage() and "its section is failed" in said[0].getMessage()
    health = await node.get("/health")
    assert health.status == 200, await health.text()


async def test_a_writer_entry_redis_refuses_to_write_for_now_waits_and_is_not_failed(
    worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, monkeypatch: Any
) -> None:
    """Redis refusing every write for a while (here a replica: READONLY; MISCONF, BUSY alike) is no entry's
    fault: the entry stays pending and is written once Redis takes writes again, never failed for it."""
    read = RedisJobs.ready
    turned: list[bool] = []
    master = dead_port()  # held: no other test's server can take the port and be copied

    async def read_then_a_replica(self: RedisJobs, *args: Any, **kwargs: Any) -> Any:
        rows = await read(self, *args, **kwargs)
        if rows and not turned:  # read: now Redis refuses the entry's writes (a replica of no one alive)
            turned.append(True)
            await self.redis.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
        return rows

    monkeypatch.setattr(RedisJobs, "ready", read_then_a_replica)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    stream = ready_key(node.app[SCHEDULER_KEY].node)
    caplog.set_level(logging.WARNING, logger="npu_worker.jobs.cluster")
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await planter.hset(job_key("sound"), mapping={**COUNTS, "spec": spec("sound")})
        await planter.set(wav_key("sound", 0), b"RIFF")
        await planter.xadd(stream, {"job": "sound", "idx": 0, "duration": 1, "elapsed": 1})
        async with asyncio.timeout(seconds(20)):  # the writer met the refusal (its log says so: polled)
            while "read only replica" not in caplog.text:
                await asyncio.sleep(0.05)
        await planter.execute_command("REPLICAOF", "NO", "ONE")
        async with asyncio.timeout(seconds(20)):  # written once Redis takes writes (polled)
            while len(events := await logged_events(planter, "sound")) < 2:
                await asyncio.sleep(0.05)
    assert [e["event"] for e in events] == ["progress", "done"] and events[0]["status"] == "ok", events
    assert "dropped entry" not in caplog.text
    master.close()
