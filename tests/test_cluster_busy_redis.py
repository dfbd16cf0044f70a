"""Redis busy running a script past its `busy-reply-threshold` (a real redis-server, a real worker in
process): every command but SCRIPT KILL is answered `BUSY` for a while, a wait like an outage. Inside a
pipeline redis-py writes the command before Redis's answer (`Command # 1 (EXISTS …) of pipeline caused
error: BUSY …`), which `refuses_every_write` read as one entry's failure: the writer failed a sound
section with `InternalError` once Redis was free again, and the engine node dropped a sound work item
(its section never ran, its job never ended)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.engine_node import EngineNode
from npu_worker.jobs.cluster.keys import job_key, log_key, ready_key, wav_key
from npu_worker.jobs.cluster.outage import refuses_every_write
from npu_worker.jobs.cluster.store import RedisJobs
from tests.timing import seconds

T = TypeVar("T")
COUNTS = {"total": 1, "seq": 1, "next": 1, "ok": 0, "fail": 0, "began": 0, "done": 0}  # as a record's


async def while_busy(url: str, call: Callable[[], Awaitable[T]]) -> T:
    """`call` made while a script keeps Redis busy (every other client answered `BUSY`), killed after."""
    async with aioredis.Redis.from_url(url) as looping, aioredis.Redis.from_url(url) as other:
        await other.config_set("busy-reply-threshold", 10)
        script = asyncio.create_task(looping.eval("while true do end", 0))
        try:
            async with asyncio.timeout(seconds(10)):  # Redis says BUSY once past the threshold (polled)
                while True:
                    try:
                        await other.ping()
                    except ResponseError as exc:
                        if str(exc).startswith("BUSY"):
                            break
                    await asyncio.sleep(0.01)
            return await call()
        finally:
            await other.script_kill()
            with pytest.raises(ResponseError, match="killed"):
                await script
            await other.config_set("busy-reply-threshold", 5000)


async def test_busy_redis_inside_a_pipeline_is_a_wait_not_an_entrys_failure(redis_server: Any) -> None:
    async with aioredis.Redis.from_url(redis_server.url) as client:
        await client.rpush("a-list", b"x")

        async def piped(key: str) -> Any:
            async with client.pipeline(transaction=False) as pipe:
                return await pipe.exists(key).get(key).execute()

        with pytest.raises(ResponseError) as busy:
            await while_busy(redis_server.url, lambda: piped("x"))
        with pytest.raises(ResponseError) as wrong_type:
            await piped("a-list")
    assert "of pipeline caused error: BUSY" in str(busy.value)
    assert refuses_every_write(busy.value)
    assert not refuses_every_write(wrong_type.value)  # one key's answer: that entry's failure alone


async def logged_events(planter: aioredis.Redis, job_id: str) -> list[dict[str, Any]]:
    return [json.loads(fields[b"e"]) for _, fields in await planter.xrange(log_key(job_id))]


async def test_a_writer_entry_read_while_redis_is_busy_is_written_after(
    worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, monkeypatch: Any
) -> None:
    """Before: its section failed (`InternalError: the writer could not handle this section's entry …`)."""
    spec_and_audio = RedisJobs.spec_and_audio
    busy: list[bool] = []
    free_again = asyncio.Event()  # (the test's own reads wait for it: Redis answers them BUSY too)

    async def first_while_busy(self: RedisJobs, *args: Any, **kwargs: Any) -> Any:
        if busy:
            return await spec_and_audio(self, *args, **kwargs)
        busy.append(True)
        try:
            return await while_busy(redis_server.url, lambda: spec_and_audio(self, *args, **kwargs))
        finally:
            free_again.set()

    monkeypatch.setattr(RedisJobs, "spec_and_audio", first_while_busy)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    caplog.set_level(logging.WARNING, logger="npu_worker.jobs.cluster")
    spec = {"id": "sound", "node": "x", "params": {}, "preview": False, "created_at": 0.0}
    spec["sections"] = [{"idx": 0, "text": "sound", "output_path": None}]
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await planter.hset(job_key("sound"), mapping={**COUNTS, "spec": json.dumps(spec)})
        await planter.set(wav_key("sound", 0), b"RIFF")
        await planter.xadd(
            ready_key(node.app[SCHEDULER_KEY].node), {"job": "sound", "idx": 0, "duration": 1, "elapsed": 1}
        )
        async with asyncio.timeout(seconds(20)):  # the section's end and the job's (polled)
            await free_again.wait()
            while len(events := await logged_events(planter, "sound")) < 2:
                await asyncio.sleep(0.05)
    assert busy == [True]
    assert [e["event"] for e in events] == ["progress", "done"] and events[0]["status"] == "ok", events
    assert "dropped entry" not in caplog.text


async def test_an_engine_item_looked_up_while_redis_is_busy_runs_after(
    worker: Any, redis_server: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    """Before: the item was acknowledged and dropped (`its job's record … BUSY`): section 1 never ran."""
    look_up = EngineNode._job
    busy: list[int] = []

    async def second_while_busy(self: EngineNode, item: Any) -> Any:
        if item.pos != 1 or busy:  # (the first item carries its job's spec: no look-up to be busy for)
            return await look_up(self, item)
        busy.append(item.pos)
        return await while_busy(redis_server.url, lambda: look_up(self, item))

    monkeypatch.setattr(EngineNode, "_job", second_while_busy)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    sections = [{"idx": 0, "text": "first"}, {"idx": 1, "text": "second"}]
    answer = await node.post("/synth_batch?async=1", json={"sections": sections})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(30)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    assert busy == [1]
    finals = [(e["idx"], e["status"]) for e in events if e["event"] == "progress" and e["status"] == "ok"]
    assert sorted(finals) == [(0, "ok"), (1, "ok")], events
    assert events[-1]["event"] == "done" and events[-1]["fail_count"] == 0, events
