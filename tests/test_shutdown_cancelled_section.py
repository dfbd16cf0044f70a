"""The drain's line for a running section whose job a `DELETE /jobs/{id}` cancelled during the drain: it
said "let section 0 of job X finish", though the section stopped and its wav was never written."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_shutdown import gated_worker
from tests.timing import until


async def test_a_section_cancelled_during_the_drain_is_not_said_to_finish(settings, caplog):
    caplog.set_level(logging.INFO, logger="npu_worker")
    connector = aiohttp.TCPConnector(limit=1)  # one kept-alive connection: the DELETE comes on it
    async with gated_worker(settings) as worker, aiohttp.ClientSession(connector=connector) as http:
        sections = [{"idx": i, "text": text} for i, text in enumerate(("가" * 5, "나" * 5))]
        async with http.post(worker.url("/synth_batch?async=1"), json={"sections": sections}) as answer:
            job = (await answer.json())["job_id"]
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        running = scheduler.admission.running_job
        await until(lambda: (job_ := running()) is not None and job_.current_idx == 0, "section 0 to run")
        cancel = worker.url(f"/jobs/{job}")  # (the port is read from the listening socket: closed next)
        worker.closing = asyncio.create_task(worker.listener.close())
        await until(lambda: scheduler.draining, "the drain to begin")
        async with http.delete(cancel) as answer:
            assert answer.status == 200, await answer.text()
        worker.gate.open()  # (the shutdown ends once the connection above is closed: gated_worker waits)
    assert not (Path(settings.state_dir) / "outputs" / job / "s00.wav").exists()  # what the line says
    said = [m for m in caplog.messages if m.startswith("shutdown:")]
    assert not any(f"let section 0 of job {job} finish" in m for m in said), said
    stopped = f"shutdown: section 0 of job {job} stopped ("
    assert any(
        m.startswith(stopped) and m.endswith("the job was cancelled, its wav not written") for m in said
    ), said
