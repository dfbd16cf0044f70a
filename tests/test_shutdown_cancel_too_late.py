"""The drain's line for a job a `DELETE /jobs/{id}` cancelled during the drain too late to stop anything:
its section had ended ok, its wav written, as the cancel came (the job ends done). The drain said "the job
was cancelled, its wav not written", which was neither. The section's `ok` is held
(tests/test_synth_hang_up_too_late.HeldAtOk) until the DELETE has been answered, so the race is made."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_synth_hang_up_too_late import HeldAtOk
from tests.test_ws_shutdown import gated_worker
from tests.timing import seconds, until


async def test_a_delete_during_the_drain_too_late_to_stop_a_section_is_not_said_to_stop_it(settings, caplog):
    caplog.set_level(logging.INFO, logger="npu_worker")
    connector = aiohttp.TCPConnector(limit=1)  # one kept-alive connection: the DELETE comes on it
    async with gated_worker(settings) as worker, aiohttp.ClientSession(connector=connector) as http:
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        held = scheduler.journal.observer = HeldAtOk(scheduler.journal.observer)
        try:
            sections = [{"idx": 0, "text": "가" * 5}]
            async with http.post(worker.url("/synth_batch?async=1"), json={"sections": sections}) as answer:
                job_id = (await answer.json())["job_id"]
            worker.gate.open()
            assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the section's ok"
            cancel = worker.url(f"/jobs/{job_id}")  # (the port read now: the socket closes next)
            worker.closing = asyncio.create_task(worker.listener.close())
            await until(lambda: scheduler.draining, "the drain to begin")
            async with http.delete(cancel) as answer:
                assert answer.status == 200 and (await answer.json())["cancel_requested"] is True
        finally:
            held.release.set()
    job = held.job
    assert job.done_event is not None and job.done_event.cancelled is False, job.done_event
    assert (Path(settings.state_dir) / "outputs" / job_id / "s00.wav").exists()
    said = [m for m in caplog.messages if m.startswith("shutdown:")]
    assert not any("its wav not written" in m for m in said), said
    assert any(f"job {job_id}" in m and "too late to stop it" in m for m in said), said
