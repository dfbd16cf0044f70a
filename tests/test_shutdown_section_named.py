"""The drain's line names the section the engine thread took, not the one its job's `synth` event last
named: for a file-only job that event waits behind the finisher's work (the wav of a section before,
on a slow disk), so a shutdown then said "let section None of job X finish" for a first section (and
named the section before for a later one)."""

from __future__ import annotations

import logging
import threading

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_shutdown import gated_worker
from tests.timing import until


async def test_the_drain_names_a_taken_section_whose_synth_is_not_logged_yet(settings, caplog):
    caplog.set_level(logging.INFO, logger="npu_worker")
    disk = threading.Event()  # the finisher busy with what it had before: a wav on a slow disk
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        scheduler.runner.finisher.submit(disk.wait)
        try:
            sections = [{"idx": 0, "text": "가" * 5}]
            async with http.post(worker.url("/synth_batch?async=1"), json={"sections": sections}) as answer:
                job = (await answer.json())["job_id"]
            await until(lambda: scheduler.admission.running_job() is not None, "section 0 to be taken")
            await worker.shut_down()
        finally:
            disk.set()
    said = [m for m in caplog.messages if m.startswith("shutdown:") and job in m]
    assert said and not any("None" in m for m in said), said
    assert any(f"section 0 of job {job}" in m for m in said), said
