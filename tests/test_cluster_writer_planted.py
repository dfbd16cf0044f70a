"""A writer entry in Redis whose job record is not of the worker's making (any local process can write
to Redis): the writer drops it, or fails that section, and goes on; it never ends, which since a node
loop's end is the node's failure would make every request of the node a 500 until it restarts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.keys import job_key, ready_key, wav_key
from tests.timing import seconds


def planted_spec(output_path: Any) -> str:
    """A job's spec as the worker writes one, but for its section's `output_path`."""
    section = {"idx": 0, "text": "planted", "output_path": output_path}
    body = {"id": "planted", "node": "x", "params": {}, "sections": [section], "preview": False}
    return json.dumps({**body, "created_at": 0.0})


COUNTS = {"total": 1, "seq": 1, "next": 1, "ok": 0, "fail": 0, "began": 0, "done": 0}  # as a record's
PLANTED = {
    "a record without a spec": COUNTS,
    "a path with a NUL byte": {**COUNTS, "spec": planted_spec("/tmp/rvp\x00planted.wav")},
    "a path that is a number": {**COUNTS, "spec": planted_spec(5)},
}


@pytest.mark.parametrize("record", list(PLANTED))
async def test_a_writer_entry_whose_job_record_is_not_ours_leaves_the_node_serving(
    worker: Any, redis_server: Any, tmp_path: Any, record: str
) -> None:
    """The writer's entry for such a record ended its loop (AssertionError, ValueError, TypeError): the
    node's `/health` became 500 `this node's writer loop ended`, and its submissions 500, for good."""
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    ready = ready_key(scheduler.node)
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await planter.hset(job_key("planted"), mapping=PLANTED[record])
        await planter.set(wav_key("planted", 0), b"RIFF")
        await planter.xadd(ready, {"job": "planted", "idx": 0, "duration": 1, "elapsed": 1})
        async with asyncio.timeout(seconds(20)):  # the writer reads it (no event says so: polled)
            while await planter.xlen(ready) and scheduler.loop_failure is None:
                await asyncio.sleep(0.05)
    health = await node.get("/health")
    assert health.status == 200, await health.text()
    answer = await node.post("/synth_batch", json={"sections": [{"idx": 0, "text": "after"}]})
    assert answer.status == 200 and b'"done"' in await answer.read()
