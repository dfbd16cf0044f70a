"""What `GET /jobs/{id}/events` costs the event loop before its first line (issue 25, benchmarks/
SERVER_OVERHEAD.md, stop 60): a live job's replay is the job itself, so the route hands the loop's
work to an executor thread once (to find the job), not twice; a finished one is still read back
there. Real worker, real socket, the test engine held at its first chunk."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def read_line(response: Any) -> dict[str, Any]:
    async with asyncio.timeout(seconds(20)):
        return json.loads(await response.content.readline())


async def test_a_running_jobs_events_hand_the_loop_off_once_and_read_the_same(worker) -> None:
    engine = ToneEngine()
    engine.gate = threading.Event()  # the first section is held at its first chunk: the job runs
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    loop = asyncio.get_running_loop()
    handed: list[str] = []  # the scheduler's methods run in an executor, in order
    run_in_executor = loop.run_in_executor

    def counted(executor: Any, func: Any, *arguments: Any) -> Any:
        if getattr(func, "__self__", None) is scheduler:
            handed.append(func.__name__)
        return run_in_executor(executor, func, *arguments)

    sections = [{"text": "먼저 읽는 문장."}, {"text": "다음 문장."}]
    queued = await (await client.post("/synth_batch?async=1", json={"sections": sections})).json()
    job_id = queued["job_id"]
    try:
        await until(lambda: engine.calls, "the first section to start")
        loop.run_in_executor = counted  # type: ignore[method-assign]
        try:
            live = await client.get(f"/jobs/{job_id}/events")
            assert live.status == 200
            start, synth = await read_line(live), await read_line(live)
        finally:
            del loop.run_in_executor
        assert handed == ["find_job"], handed  # (replayed_job's hop came after it, for the same job)
        assert (start["event"], start["seq"]) == ("start", 1)
        assert (synth["event"], synth["status"], synth["idx"], synth["seq"]) == ("progress", "synth", 0, 2)
    finally:
        engine.gate.set()
    lines = [start, synth]
    while lines[-1]["event"] != "done":
        lines.append(await read_line(live))
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["ok_count"] == 2
    await until(lambda: scheduler.find_job(job_id).__class__.__name__ == "KeptJob", "the job to be kept")

    handed.clear()
    loop.run_in_executor = counted  # type: ignore[method-assign]
    try:
        replay = await client.get(f"/jobs/{job_id}/events")
        async with asyncio.timeout(seconds(20)):
            replayed = [json.loads(line) for line in (await replay.read()).splitlines()]
    finally:
        del loop.run_in_executor
    assert handed == ["find_job", "replayed_job"], handed  # a finished one is read back off the loop
    assert replayed == lines
