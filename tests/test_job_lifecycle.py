"""Job lifecycle over HTTP: admission bounds under concurrency, cancel, hang-ups, replay past `done`."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
import threading
import time

import aiohttp
import pytest
from aiohttp import web

from npu_worker.app import build_app
from npu_worker.app_keys import LIMITS_KEY, NDJSON_STREAMS_KEY, SCHEDULER_KEY, SETTINGS_KEY
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def read_ndjson(response: aiohttp.ClientResponse) -> list[dict]:
    return [json.loads(raw) for raw in [line async for line in response.content] if raw.strip()]


async def events_until_done(client, job_id: str) -> list[dict]:
    async with asyncio.timeout(seconds(30)):
        return await read_ndjson(await client.get(f"/jobs/{job_id}/events"))


def gated_engine() -> ToneEngine:
    engine = ToneEngine()
    engine.gate = threading.Event()
    return engine


async def test_concurrent_async_batches_never_overshoot_the_queue_bound(worker):
    engine = gated_engine()
    client = await worker(engine, max_queue=40)
    sections = [{"idx": i, "text": f"섹션 {i}."} for i in range(10)]
    responses = await asyncio.gather(
        *(client.post("/synth_batch?async=1", json={"sections": sections}) for _ in range(30))
    )
    statuses = [r.status for r in responses]
    accepted = statuses.count(200)
    assert set(statuses) <= {200, 429}
    assert accepted * 10 <= 40, f"{accepted * 10} sections admitted with --max-queue 40"
    assert client.app[SCHEDULER_KEY].queue_size() <= 40
    engine.gate.set()
    for response in responses:
        if response.status == 200:
            done = (await events_until_done(client, (await response.json())["job_id"]))[-1]
            assert done["event"] == "done" and done["ok_count"] == 10
    assert client.app[SCHEDULER_KEY].queue_size() == 0


async def test_cancelling_a_queued_job_ends_it_without_running_any_section(worker):
    engine = gated_engine()
    client = await worker(engine)
    running = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "먼저."}]})).json()
    queued = await (
        await client.post(
            "/synth_batch?async=1", json={"sections": [{"text": "대기 하나."}, {"text": "대기 둘."}]}
        )
    ).json()
    answer = await client.delete(f"/jobs/{queued['job_id']}")
    body = await answer.json()
    assert answer.status == 200 and body["cancel_requested"] is True
    done = (await events_until_done(client, queued["job_id"]))[-1]
    assert done["cancelled"] is True and done["ok_count"] == 0
    engine.gate.set()
    assert (await events_until_done(client, running["job_id"]))[-1]["ok_count"] == 1
    assert engine.calls == ["먼저."]
    assert client.app[SCHEDULER_KEY].queue_size() == 0


async def test_delete_of_a_finished_job_does_not_claim_a_cancel(worker):
    client = await worker()
    job = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "끝."}]})).json()
    await events_until_done(client, job["job_id"])
    answer = await client.delete(f"/jobs/{job['job_id']}")
    body = await answer.json()
    assert answer.status == 200
    assert body["cancel_requested"] is False and body["status"] == "done"


async def test_events_after_the_done_seq_end_at_once(worker):
    client = await worker()
    job = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "끝."}]})).json()
    done = (await events_until_done(client, job["job_id"]))[-1]
    for after in (done["seq"], done["seq"] + 5):
        async with asyncio.timeout(seconds(5)):
            lines = await read_ndjson(await client.get(f"/jobs/{job['job_id']}/events?after={after}"))
        assert lines == []


async def hang_up_after_the_first_line(host: str, port: int, body: dict) -> str:
    """POST an NDJSON batch on a raw socket, read up to the `start` line, then reset the socket."""
    reader, writer = await asyncio.open_connection(host, port)
    payload = json.dumps(body).encode()
    head = "POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    writer.write(head.encode() + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
    async with asyncio.timeout(seconds(10)):
        while b'"event": "start"' not in (line := await reader.readline()):
            assert line, "the stream ended before its start line"
    # Reset rather than a polite FIN: the server learns at once that nobody reads any more.
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()
    return json.loads(line[line.index(b"{") :])["job_id"]


async def test_a_client_hanging_up_on_ndjson_is_one_info_line_and_the_job_goes_on(settings, caplog):
    caplog.set_level(logging.INFO, logger="npu_worker")
    engine = ToneEngine(delay_per_chunk=0.02)  # later events are written well after the reset
    engine.gate = threading.Event()
    # As `serve` runs it (aiohttp's test server would cancel the handler on a hang-up instead).
    runner = web.AppRunner(await asyncio.to_thread(build_app, settings, engine))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        host, port = runner.addresses[0][:2]
        async with aiohttp.ClientSession(f"http://{host}:{port}") as client:
            async with asyncio.timeout(seconds(30)):
                while (await client.get("/health")).status != 200:  # the engine loads on its thread
                    await asyncio.sleep(0.01)
            sections = [{"idx": i, "text": f"문장 {i}."} for i in range(4)]
            job_id = await hang_up_after_the_first_line(host, port, {"sections": sections})
            engine.gate.set()
            done = (await events_until_done(client, job_id))[-1]
            assert done["ok_count"] == 4 and done["cancelled"] is False
            async with asyncio.timeout(seconds(10)):
                while not any("went away" in r.getMessage() for r in caplog.records) and not any(
                    r.levelno >= logging.ERROR for r in caplog.records
                ):
                    await asyncio.sleep(0.01)
    finally:
        await runner.cleanup()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    assert len([r for r in caplog.records if "went away" in r.getMessage()]) == 1


async def test_a_negative_or_huge_seed_is_a_400(worker, tmp_path):
    client = await worker()
    for seed in (-1, 2**40):
        synth = await client.post(
            "/synth", json={"text": "가.", "output_path": str(tmp_path / "a.wav"), "seed": seed}
        )
        assert synth.status == 400 and (await synth.json())["error"].startswith("BadRequest:")
        batch = await client.post("/synth_batch", json={"sections": [{"text": "가."}], "seed": seed})
        assert batch.status == 400
    ok = await client.post("/synth", json={"text": "가.", "output_path": str(tmp_path / "a.wav"), "seed": 7})
    assert (await ok.json())["status"] == "ok"


async def test_limits_are_built_in_one_place(worker):
    client = await worker()
    settings = client.app[SETTINGS_KEY]
    assert client.app[LIMITS_KEY] == settings.limits == client.app[SCHEDULER_KEY].limits


async def test_job_list_is_a_snapshot_while_jobs_are_submitted(worker):
    client = await worker()
    body = {"sections": [{"text": "가."}]}
    posts = [client.post("/synth_batch?async=1", json=body) for _ in range(20)]
    lists = [client.get("/jobs") for _ in range(20)]
    answers = await asyncio.gather(*posts, *lists)
    assert {a.status for a in answers} == {200}
    jobs = (await (await client.get("/jobs")).json())["jobs"]
    assert len(jobs) == 20


async def test_a_wall_clock_set_back_makes_no_negative_time_and_the_newest_job_is_listed_first(worker):
    """A job's time was the wall clock's difference: set back an hour while a job ran, its `done` said
    `elapsed_total_sec: -3599.8`, and a job admitted after that was listed below every earlier one."""
    engine = gated_engine()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    step = [0.0]
    scheduler.clock = lambda: time.time() + step[0]
    before = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "전."}]})).json()
    step[0] = -3600.0  # the clock is set back while the job runs
    after = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "후."}]})).json()
    listed = [job["job_id"] for job in (await (await client.get("/jobs")).json())["jobs"]]
    assert listed == [after["job_id"], before["job_id"]]
    engine.gate.set()
    done = (await events_until_done(client, before["job_id"]))[-1]
    assert 0 <= done["elapsed_total_sec"] < 60


async def test_a_batch_caller_waiting_with_stream_false_gets_its_job_so_far_at_the_shutdown(worker):
    """`stream: false` waits for the whole batch; at a shutdown its connection was cut without a word
    (RemoteDisconnected), so the caller never learnt the id of the job that resumes at the restart."""
    from npu_worker.http_compat.ndjson import end_streams

    engine = gated_engine()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    body = {"sections": [{"text": "먼저."}, {"text": "다음."}], "stream": False}
    waiting = asyncio.ensure_future(client.post("/synth_batch", json=body))
    async with asyncio.timeout(seconds(5)):
        # section 0 is being made and the caller waits on its job (admitted off the loop, the job may
        # start before the handler is back to listen: under load the drain could end first)
        while not engine.calls or not client.app[NDJSON_STREAMS_KEY]:
            await asyncio.sleep(0.01)
    drain = asyncio.ensure_future(scheduler.drain(grace=seconds(10)))
    # section 0 finishes in the drain; section 1 waits for the restart (a gate opened before the drain
    # task began let the engine thread go on to section 1, and the batch ended before the drain)
    await until(lambda: scheduler.admission.stopping, "the drain to begin")
    engine.gate.set()
    await drain
    # what the shutdown does after the drain: a wait, not a stream (the log counted it as one)
    assert end_streams(client.app) == (0, 1)
    async with asyncio.timeout(seconds(5)):
        answer = await waiting
    result = await answer.json()
    assert answer.status == 202
    assert (result["status"], result["total"], result["ok_count"]) == ("running", 2, 1)
    status = await (await client.get(f"/jobs/{result['job_id']}/status")).json()
    assert status["status"] == "running" and status["done"] == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_a_batch_caller_back_from_admission_after_the_streams_ended_is_answered_at_once(worker, stream):
    """A batch is admitted off the loop; a caller whose job was admitted before the drain but who came
    back to listen only after the shutdown had ended the open streams waited until aiohttp cut it."""
    from npu_worker.http_compat.ndjson import end_streams

    engine = gated_engine()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    admitted, back = threading.Event(), threading.Event()
    admit = scheduler._admit

    def slow_return(job, request):
        admit(job, request)
        admitted.set()
        back.wait(seconds(10))  # the handler is not back on the loop yet

    scheduler._admit = slow_return
    body = {"sections": [{"text": "먼저."}, {"text": "다음."}], "stream": stream}
    waiting = asyncio.ensure_future(client.post("/synth_batch", json=body))
    async with asyncio.timeout(seconds(5)):
        while not admitted.is_set() or not engine.calls:
            await asyncio.sleep(0.01)
    drain = asyncio.ensure_future(scheduler.drain(grace=seconds(10)))
    await until(lambda: scheduler.admission.stopping, "the drain to begin")  # before the gate opens
    engine.gate.set()  # section 0 finishes in the drain; section 1 waits for the restart
    await drain
    assert end_streams(client.app) == (0, 0)  # what the shutdown does after the drain: nobody listens yet
    back.set()
    async with asyncio.timeout(seconds(5)):
        answer = await waiting
        body = await read_ndjson(answer) if stream else await answer.json()
    if stream:  # the lines so far, without `done`: the client re-attaches after the restart
        assert body[0]["event"] == "start" and "done" not in [line["event"] for line in body]
        assert [line.get("status") for line in body if line["event"] == "progress"][-1] == "ok"
    else:
        assert answer.status == 202 and (body["status"], body["ok_count"]) == ("running", 1)


async def test_a_synth_still_queued_when_the_shutdown_begins_gets_its_answer_at_once(worker, tmp_path):
    """The drain starts no new section and previews are not kept for the next start: a `/synth` queued
    behind a batch section waited out the drain and the connections' grace, then saw its connection
    closed without an answer. It now ends at once with the reason; the queued batch stays to resume."""
    engine = gated_engine()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    sections = [{"text": "먼저."}, {"text": "다음."}]
    batch = await (await client.post("/synth_batch?async=1", json={"sections": sections})).json()
    async with asyncio.timeout(seconds(5)):
        while not engine.calls:  # the batch's first section holds the engine (else the /synth would, first)
            await asyncio.sleep(0.01)
    body = {"text": "미리.", "output_path": str(tmp_path / "preview.wav")}
    synth = asyncio.ensure_future(client.post("/synth", json=body))
    async with asyncio.timeout(seconds(5)):
        while scheduler.queue_size() < 3:  # the /synth is queued
            await asyncio.sleep(0.01)
    drain = asyncio.ensure_future(scheduler.drain(grace=seconds(10)))
    try:
        async with asyncio.timeout(seconds(5)):
            answer = await (await synth).json()
    finally:
        engine.gate.set()
        await drain
    assert answer["status"] == "fail"
    assert answer["error"] == "QueueFull: the worker is shutting down; send the request again once it is back"
    assert not (tmp_path / "preview.wav").exists()
    status = await (await client.get(f"/jobs/{batch['job_id']}/status")).json()
    assert status["status"] == "running" and status["done"] == 1  # the rest resumes at the next start


async def test_a_synth_admitted_off_the_loop_across_the_start_of_the_shutdown_gets_its_answer(
    worker, tmp_path
):
    """A `/synth` is admitted in a thread: its sections counted before the drain began and queued after
    it had ended the waiting previews stayed queued with no engine thread left to run them, and its
    caller waited until the connections' grace cut it. It now ends at once with the reason."""
    client = await worker()
    scheduler = client.app[SCHEDULER_KEY]
    enqueue, enqueuing, release = scheduler.admission.enqueue, threading.Event(), threading.Event()

    def held_enqueue(job, told_at_once=None) -> None:  # noqa: ANN001 - the admission thread, held between reserve and queue
        enqueuing.set()
        release.wait(seconds(10))
        enqueue(job, told_at_once)

    scheduler.admission.enqueue = held_enqueue  # type: ignore[method-assign]
    body = {"text": "늦은 미리 듣기.", "output_path": str(tmp_path / "late.wav")}
    synth = asyncio.ensure_future(client.post("/synth", json=body))
    try:
        assert await asyncio.to_thread(enqueuing.wait, seconds(10))
        await scheduler.drain(grace=seconds(10))
    finally:
        release.set()
    async with asyncio.timeout(seconds(5)):
        answer = await (await synth).json()
    assert answer["status"] == "fail"
    assert answer["error"] == "QueueFull: the worker is shutting down; send the request again once it is back"
    assert not (tmp_path / "late.wav").exists() and scheduler.admission.live_jobs() == []
