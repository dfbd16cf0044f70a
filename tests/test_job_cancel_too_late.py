"""A cancel taken as a job's last section ended ok (its file written, its `done` still to be logged)
stopped nothing: the job ends `ok`, and its `done`, its status and `/metrics` say so, as its caller's
answer does. It ended `cancelled` for a `/synth` whose caller half-closed just then (the caller read a
200 and its file) and for a batch whose DELETE came then. The engine thread is held at the section's
`ok` (tests/test_synth_hang_up_too_late.HeldAtOk) until the cancel is taken, so the race is made."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_metrics_hang_up import scrape
from tests.test_synth_hang_up_too_late import HeldAtOk, synth_half_closed_at_ok
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


def job_outcomes(samples: dict) -> dict[tuple[str, str], float]:
    return {
        (dict(labels)["kind"], dict(labels)["outcome"]): count
        for (name, labels), count in samples.items()
        if name == "npu_worker_jobs_total" and count
    }


async def held_server(served):
    listener = await served(ToneEngine())
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    return listener, held


async def test_a_synth_whose_hang_up_came_as_its_file_was_written_ends_ok(served, tmp_path):
    listener, held = await held_server(served)
    answer, job = await synth_half_closed_at_ok(listener.port, held, tmp_path)
    assert b'"status":"ok"' in answer.replace(b" ", b""), answer
    await until(lambda: job.done_event is not None, "the job's done")
    assert job.done_event.cancelled is False and job.status == "done", (job.done_event, job.status)
    assert job_outcomes(await scrape(listener.port)) == {("preview", "ok"): 1.0}


async def test_a_batch_whose_delete_came_as_its_last_section_ended_ok_ends_ok(served, tmp_path):
    listener, held = await held_server(served)
    base = f"http://127.0.0.1:{listener.port}"
    sections = [{"idx": 0, "text": "안녕하세요.", "output_path": str(tmp_path / "a.wav")}]
    async with aiohttp.ClientSession() as session:
        waiting = asyncio.ensure_future(
            session.post(f"{base}/synth_batch", json={"sections": sections, "stream": False})
        )
        try:
            assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the section's ok"
            job_id = held.job.id
            async with session.delete(f"{base}/jobs/{job_id}") as deleted:
                assert deleted.status == 200 and (await deleted.json())["cancel_requested"] is True
            held.release.set()
            async with asyncio.timeout(seconds(20)):
                response = await waiting
                result = await response.json()
        finally:
            held.release.set()
            if not waiting.done():
                waiting.cancel()
        assert result["status"] == "ok", result
        async with session.get(f"{base}/jobs/{job_id}/status") as status:
            assert (await status.json())["status"] == "done"
        async with session.get(f"{base}/jobs/{job_id}/events") as events:
            lines = [json.loads(line) for line in (await events.text()).splitlines() if line.strip()]
        (done,) = [line for line in lines if line.get("event") == "done"]
        assert done["cancelled"] is False, done
    assert job_outcomes(await scrape(listener.port)) == {("batch", "ok"): 1.0}


async def test_a_delete_as_a_batch_ended_after_a_failed_section_stops_nothing(served, tmp_path):
    """Every section ran to its end (one failed, the last ok): the DELETE stopped nothing, so the job
    is `done`, not `cancelled` (its too-late cancel was read as a stop unless every section was ok)."""
    listener = await served(ToneEngine(fail_on="FAIL"))
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    base = f"http://127.0.0.1:{listener.port}"
    sections = [
        {"idx": 0, "text": "FAIL 안녕.", "output_path": str(tmp_path / "a.wav")},
        {"idx": 1, "text": "안녕하세요.", "output_path": str(tmp_path / "b.wav")},
    ]
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}/synth_batch?async=1", json={"sections": sections}) as posted:
            assert posted.status == 200, await posted.text()
        try:
            assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the last section's ok"
            job_id = held.job.id
            async with session.delete(f"{base}/jobs/{job_id}") as deleted:
                assert deleted.status == 200 and (await deleted.json())["cancel_requested"] is True
        finally:
            held.release.set()
        await until(lambda: held.job.done_event is not None, "the job's done")
        async with session.get(f"{base}/jobs/{job_id}/status") as status:
            assert (await status.json())["status"] == "done"
        async with session.get(f"{base}/jobs/{job_id}/events") as events:
            lines = [json.loads(line) for line in (await events.text()).splitlines() if line.strip()]
        (done,) = [line for line in lines if line.get("event") == "done"]
        assert done["cancelled"] is False and (done["ok_count"], done["fail_count"]) == (1, 1), done
    outcomes = job_outcomes(await scrape(listener.port))
    assert ("batch", "cancelled") not in outcomes, outcomes
