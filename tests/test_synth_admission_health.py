"""A `/synth` whose admission still runs off the loop (`quiet_admission`) is work left: `/health` said
`jobs_running: 0` meanwhile, so `npu-worker bench`, stopped with such a request given up on, took the
worker for idle, removed its wav folder and ended; the job was admitted after that, ran for nobody and
wrote its wav, the folder made again (CI, stop 63: tests/test_bench_stopped_in_a_request.py). Real
worker, real socket; the admission held on its thread by a hook."""

from __future__ import annotations

import asyncio
import threading

from npu_worker.app_keys import SCHEDULER_KEY
from tests.timing import seconds


async def test_health_counts_a_synth_whose_admission_is_still_under_way(worker, tmp_path):
    client = await worker()
    scheduler = client.app[SCHEDULER_KEY]
    entered, release = threading.Event(), threading.Event()
    admit = scheduler._admit

    def held_admit(job, request):  # the admitting thread's call, held until the test has looked
        entered.set()
        release.wait(seconds(60))
        admit(job, request)

    scheduler._admit = held_admit
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
    assert (tmp_path / "held.wav").stat().st_size > 44
    health = await (await client.get("/health")).json()
    assert health["jobs_running"] == 0, health
