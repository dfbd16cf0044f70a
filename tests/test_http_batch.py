"""The v1 HTTP/NDJSON contract on a real socket, with the tone test engine: `/synth_batch` (streamed, one
body, async) and its refusals."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_http_api import read_ndjson, wav_seconds
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_synth_batch_streams_every_section_then_done(worker, tmp_path):
    client = await worker()
    sections = [
        {"idx": i, "text": f"문장 {i}.", "output_path": str(tmp_path / f"s{i:02d}.wav")} for i in range(3)
    ]
    response = await client.post("/synth_batch", json={"sections": sections})
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("application/x-ndjson")
    assert response.headers["X-Accel-Buffering"] == "no"
    assert response.headers["Cache-Control"] == "no-cache"
    events = await read_ndjson(response)
    assert events[0]["event"] == "start" and events[0]["total"] == 3 and events[0]["job_id"]
    assert events[0]["backend"] == "tone" and events[0]["device"] == "cpu"
    oks = [e for e in events if e["event"] == "progress" and e["status"] == "ok"]
    assert [e["idx"] for e in oks] == [0, 1, 2]
    for event in oks:
        assert abs(event["duration_sec"] - wav_seconds(event["wav_path"])) < 0.01
        assert event["elapsed_sec"] >= 0
    assert events[-1] == {**events[-1], "event": "done", "total": 3, "ok_count": 3, "fail_count": 0}
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


async def test_progress_of_section_0_arrives_before_section_1_finishes(worker, tmp_path):
    engine = ToneEngine(chunk_seconds=0.05)
    release = threading.Event()
    client = await worker(engine)
    original = engine.stream

    def gated(request):
        if request.text.startswith("second"):
            release.wait(seconds(10))  # section 1 may only finish once the test has seen section 0 ok
        yield from original(request)

    engine.stream = gated
    sections = [{"idx": 0, "text": "first section."}, {"idx": 1, "text": "second section."}]
    response = await client.post("/synth_batch", json={"sections": sections})
    seen_ok_0_while_1_blocked = False
    async with asyncio.timeout(seconds(10)):
        async for raw in response.content:
            event = json.loads(raw)
            if event["event"] == "progress" and event["idx"] == 0 and event["status"] == "ok":
                seen_ok_0_while_1_blocked = not release.is_set()
                release.set()
            if event["event"] == "done":
                break
    assert seen_ok_0_while_1_blocked


async def test_a_failing_section_is_an_error_event_and_the_batch_completes(worker):
    client = await worker(ToneEngine(fail_on="BOOM"))
    sections = [
        {"idx": 0, "text": "fine."},
        {"idx": 1, "text": "BOOM"},
        {"idx": 2, "text": "  "},
        {"idx": 3, "text": "x" * 2001},
        {"idx": 4, "text": "also fine."},
    ]
    events = await read_ndjson(await client.post("/synth_batch", json={"sections": sections}))
    errors = {e["idx"]: e for e in events if e["event"] == "error"}
    assert errors[1]["error"].startswith("EngineError:") and errors[1]["status"] == "fail"
    assert errors[2]["error"].startswith("EmptyText:")
    assert errors[3]["error"].startswith("TextTooLong:")
    assert events[-1]["event"] == "done"
    assert events[-1]["ok_count"] == 2 and events[-1]["fail_count"] == 3


async def test_heartbeats_flow_while_a_long_section_runs(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.1), heartbeat_interval=0.2)
    response = await client.post("/synth_batch", json={"sections": [{"idx": 0, "text": "x" * 60}]})
    events = await read_ndjson(response)
    assert any(e["event"] == "heartbeat" for e in events)
    assert events[-1]["event"] == "done"


async def test_stream_false_returns_one_body_when_all_is_done(worker):
    client = await worker()
    body = {"sections": [{"idx": 0, "text": "하나."}, {"idx": 1, "text": "둘."}], "stream": False}
    response = await client.post("/synth_batch", json=body)
    result = await response.json()
    assert result["status"] == "ok" and result["total"] == 2 and result["ok_count"] == 2
    assert [s["idx"] for s in result["sections"]] == [0, 1]
    assert result["wav_paths"] == [s["wav_path"] for s in result["sections"]]
    assert result["elapsed_total_sec"] >= 0


async def test_async_mode_end_to_end(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    response = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "a."}, {"idx": 1, "text": "b."}]}
    )
    assert response.status == 200
    accepted = await response.json()
    assert accepted["status"] == "queued" and accepted["total"] == 2
    job_id = accepted["job_id"]
    early = await client.get(f"/jobs/{job_id}/result")
    assert early.status == 202
    assert (await early.json())["job_id"] == job_id
    engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        while (status := await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != "done":
            await asyncio.sleep(0.02)
    assert status == {**status, "done": 2, "total": 2, "ok": 2, "fail": 0}
    result = await (await client.get(f"/jobs/{job_id}/result")).json()
    assert result["status"] == "done" and len(result["wav_paths"]) == 2
    listed = await (await client.get("/jobs")).json()
    assert job_id in [j["job_id"] for j in listed["jobs"]]


async def test_a_stream_false_batch_that_was_cancelled_does_not_answer_ok(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    body = {"sections": [{"idx": i, "text": "abc."} for i in range(5)], "stream": False}
    answer = asyncio.ensure_future(client.post("/synth_batch", json=body))
    async with asyncio.timeout(seconds(10)):
        while not (jobs := (await (await client.get("/jobs")).json())["jobs"]):
            await asyncio.sleep(0.02)
    assert (await client.delete(f"/jobs/{jobs[0]['job_id']}")).status == 200
    engine.gate.set()
    result = await (await answer).json()
    assert result["status"] == "cancelled" and result["ok_count"] < 5


async def test_a_job_the_state_dir_cannot_record_is_a_named_503_and_nothing_runs(worker, tmp_path, settings):
    """A full or broken state disk (here a file where the jobs folder was) is the worker's trouble: a
    named 503 without a traceback, nothing queued; a /synth, which keeps no record, still works."""
    engine = ToneEngine()
    client = await worker(engine)
    jobs = Path(settings.state_dir) / "jobs"
    jobs.rmdir()
    jobs.write_bytes(b"not a folder")
    response = await client.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "a."}]})
    assert response.status == 503
    body = await response.json()
    assert body["error"].startswith("StateUnavailable: ") and body["traceback"] is None
    assert str(jobs) not in body["error"]
    assert (await (await client.get("/health")).json())["queue"] == 0 and engine.calls == []
    answer = await client.post("/synth", json={"text": "b.", "output_path": str(tmp_path / "b.wav")})
    assert (await answer.json())["status"] == "ok"


async def test_queue_over_its_bound_is_429_with_retry_after(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=3)
    ok = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": i, "text": "a."} for i in range(3)]}
    )
    assert ok.status == 200
    full = await client.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "b."}]})
    assert full.status == 429 and full.headers["Retry-After"]
    assert (await full.json())["error"].startswith("QueueFull:")
    engine.gate.set()


async def test_a_batch_larger_than_the_queue_bound_is_400_not_a_retryable_429(worker):
    client = await worker(max_queue=3)
    response = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": i, "text": "a."} for i in range(4)]}
    )
    assert response.status == 400 and "Retry-After" not in response.headers
    assert (await response.json())["error"] == (
        "TooManySections: 4 sections, the limit is 3 (--max-queue: a batch's sections are queued at once)"
    )


async def test_a_batch_over_max_sections_names_max_sections(worker):
    client = await worker(max_sections=3)
    response = await client.post("/synth_batch", json={"sections": [{"text": "a."} for _ in range(4)]})
    assert response.status == 400
    assert (await response.json())["error"] == "TooManySections: 4 sections, the limit is 3 (--max-sections)"


async def test_jobs_running_returns_to_zero_after_work(worker):
    client = await worker()
    await read_ndjson(await client.post("/synth_batch", json={"sections": [{"idx": 0, "text": "a."}]}))
    health = await (await client.get("/health")).json()
    assert health["jobs_running"] == 0 and health["queue"] == 0
    # (no TTFA: an NDJSON batch streams no audio to a listener)
    assert health["ttfa_ms"]["count"] == 0 and client.app[SCHEDULER_KEY].queue_size() == 0


async def test_default_output_goes_to_the_outputs_folder_of_the_state_dir(worker, settings):
    client = await worker()
    events = await read_ndjson(
        await client.post("/synth_batch", json={"sections": [{"idx": 7, "text": "a."}]})
    )
    ok = next(e for e in events if e["event"] == "progress" and e["status"] == "ok")
    job_id = events[0]["job_id"]
    assert ok["wav_path"] == str(Path(settings.state_dir) / "outputs" / job_id / "s07.wav")
    assert Path(ok["wav_path"]).stat().st_size > 44


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"sections": [{"text": "a."}, {"text": "b.", "output_path": ""}]}, "$.sections[1].output_path"),
        ({"sections": [{"text": "a."}], "ref_wav": ""}, "$.ref_wav"),
    ],
)
async def test_an_empty_path_is_a_400_naming_its_field_as_on_synth(worker, tmp_path, body, where):
    """`""` went silently to the default output (or voice) here while /synth refused it."""
    client = await worker()
    response = await client.post("/synth_batch", json=body)
    assert response.status == 400
    error = (await response.json())["error"]
    assert error.startswith("BadRequest: ") and error.endswith(f"at `{where}`"), error
    synth = {"text": "a.", "output_path": str(tmp_path / "a.wav"), "ref_wav": ""}
    response = await client.post("/synth", json=synth)
    assert response.status == 400
    assert (await response.json())["error"].endswith("at `$.ref_wav`")
    assert not (tmp_path / "a.wav").exists()
