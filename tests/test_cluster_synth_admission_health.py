"""A cluster node (`--queue redis://`) says a `/synth` still being submitted is running: its checks run
off the loop and Redis is written after, and meanwhile `/health` said `queue: 0, jobs_running: 0`, so
`npu-worker bench`, stopped with such a request given up on, took the node for idle and removed its wav
folder before the job was queued (as a local worker did, tests/test_synth_admission_health.py). Real
worker, real redis-server, real socket; the submission's checks held on their thread by a hook."""

from __future__ import annotations

import asyncio
import threading

from npu_worker.app_keys import SCHEDULER_KEY
from tests.timing import seconds


async def test_cluster_health_counts_a_synth_still_being_submitted(redis_server, worker, tmp_path):
    client = await worker(queue=redis_server.url, role="both")
    scheduler = client.app[SCHEDULER_KEY]
    entered, release = threading.Event(), threading.Event()
    resolve = scheduler._resolve

    def held_resolve(job, request):  # the submission's checks off the loop, held until the test has looked
        entered.set()
        release.wait(seconds(60))
        resolve(job, request)

    scheduler._resolve = held_resolve
    body = {"text": "한 번에.", "output_path": str(tmp_path / "held.wav")}
    answer = asyncio.ensure_future(client.post("/synth", json=body))
    try:
        assert await asyncio.to_thread(entered.wait, seconds(30))
        health = await (await client.get("/health")).json()
        assert health["jobs_running"] == 1, health
    finally:
        release.set()
        response = await answer
    assert (await response.json())["status"] == "ok"
    assert scheduler.submitting == 0  # (its job may still be the engine's for a moment: not asserted)
