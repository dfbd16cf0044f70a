"""The v1 HTTP/NDJSON contract (PROTOCOL §1–5) on a real socket, with the tone test engine."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import wave
from pathlib import Path

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def read_ndjson(response) -> list[dict]:
    lines = []
    async for raw in response.content:
        if raw.strip():
            lines.append(json.loads(raw))
    return lines


def wav_seconds(path: str) -> float:
    with wave.open(path) as source:
        return source.getnframes() / source.getframerate()


async def test_health_reports_the_fixed_and_extension_fields(worker):
    client = await worker()
    response = await client.get("/health")
    assert response.status == 200
    body = await response.json()
    for key in ("status", "loaded", "load_seconds", "backend", "device", "ref_wav", "version"):
        assert key in body
    assert body["status"] == "ok" and body["loaded"] is True and body["version"] == "v1.0"
    assert body["backend"] == "tone" and body["device"] == "cpu" and body["sample_rate"] == 24000
    for key in ("model", "precision", "fallback_reason", "queue", "jobs_running", "ttfa_ms"):
        assert key in body
    assert body["placement"] == {}  # no ONNX sessions in the tone engine
    assert body["load_phase"] is None


async def test_health_is_503_while_the_engine_loads(worker):
    engine = ToneEngine()
    engine.load_gate = loading = threading.Event()  # loads until the test ends (2 s of load_delay were
    try:  # waited out again by the worker's stop)
        client = await worker(engine, wait_loaded=False)
        response = await client.get("/health")
        assert response.status == 503
        body = await response.json()
        assert body["loaded"] is False and body["status"] == "loading"
        assert body["load_phase"] == "tuning the tones"
        # the configured backend (espeak) by the name it reports once loaded, not the setting's "espeak"
        assert body["backend"] == "espeak-ng"
        synth = await client.post("/synth", json={"text": "x", "output_path": "/tmp/x.wav"})
        assert synth.status == 503
        assert (await synth.json())["error"].startswith("Loading:")
    finally:
        loading.set()


async def test_synth_writes_the_wav_and_answers_sovits_compatible_fields(worker, tmp_path):
    client = await worker()
    out = tmp_path / "a" / "s00.wav"
    response = await client.post(
        "/synth", json={"text": "안녕하세요.", "lang": "ko", "output_path": str(out)}
    )
    assert response.status == 200
    body = await response.json()
    assert body["status"] == "ok"
    assert body["output"] == body["wav_path"] == str(out)
    assert abs(body["duration_sec"] - wav_seconds(str(out))) < 0.01
    assert body["sample_rate"] == 24000 and body["engine"] == "tone" and body["device"] == "cpu"
    assert body["rtf"] == round(body["elapsed_sec"] / body["duration_sec"], 4)


async def test_a_body_that_begins_with_a_utf8_byte_order_mark_is_read(worker, tmp_path):
    """Windows tools write one (PowerShell 5's `-Encoding UTF8`; `curl --data-binary @file` sends it as
    is); RFC 8259 lets a parser ignore it and Python's `json.loads` on bytes does (sovits_worker's
    callers). It was a 400 `invalid character (byte 0)`."""
    client = await worker()
    out = tmp_path / "bom.wav"
    body = json.dumps({"text": "안녕하세요.", "output_path": str(out)}, ensure_ascii=False)
    raw = b"\xef\xbb\xbf" + body.encode("utf-8")
    response = await client.post("/synth", data=raw, headers={"Content-Type": "application/json"})
    assert response.status == 200, await response.text()
    assert (await response.json())["wav_path"] == str(out) and out.exists()
    batch = b"\xef\xbb\xbf" + json.dumps({"sections": [{"text": "a."}], "stream": False}).encode()
    response = await client.post("/synth_batch", data=batch)
    assert response.status == 200 and (await response.json())["ok_count"] == 1


async def test_synth_engine_failure_is_200_with_status_fail(worker, tmp_path):
    client = await worker(ToneEngine(fail_on="BOOM"))
    out = tmp_path / "x.wav"
    response = await client.post("/synth", json={"text": "BOOM", "output_path": str(out)})
    assert response.status == 200
    body = await response.json()
    assert body["status"] == "fail" and body["error"].startswith("EngineError:")
    assert not out.exists()


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


async def test_health_answers_fast_while_a_long_section_is_synthesised(worker):
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.2)
    client = await worker(engine)
    response = await client.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "x" * 80}]})
    job_id = (await response.json())["job_id"]
    async with asyncio.timeout(seconds(10)):
        while (await (await client.get(f"/jobs/{job_id}/status")).json())["status"] != "running":
            await asyncio.sleep(0.02)
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        assert (await client.get("/health")).status == 200
        timings.append(time.perf_counter() - started)
    assert min(timings) < 0.05  # the loop is free; min() tolerates a noisy shared machine
    await client.delete(f"/jobs/{job_id}")


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


async def test_events_replay_after_n_then_follow_until_done(worker):
    client = await worker()
    sections = [{"idx": i, "text": f"s{i}."} for i in range(3)]
    full = await read_ndjson(await client.post("/synth_batch", json={"sections": sections}))
    job_id = full[0]["job_id"]
    replay = await read_ndjson(await client.get(f"/jobs/{job_id}/events?after=2"))
    assert replay == full[2:]


async def test_a_head_of_the_events_answers_headers_only_and_the_connection_stays_in_step(served):
    """HEAD is routed with every GET: on `/jobs/{id}/events` it wrote the job's lines after the head
    (a HEAD answer has no body, so a kept-alive client read them as its next answer) and, for a running
    job, held the connection until the job's end."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the job stays running: HEAD must not wait for its end
    listener = await served(engine)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        body = json.dumps({"sections": [{"idx": 0, "text": "a."}]}).encode()
        writer.write(b"POST /synth_batch?async=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        writer.write(b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        async with asyncio.timeout(seconds(10)):
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            job_id = json.loads(await reader.readexactly(length))["job_id"]
            writer.write(f"HEAD /jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and b"application/x-ndjson" in head
            writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert (await reader.readuntil(b"\r\n")).startswith(b"HTTP/1.1 200")  # the next answer's
    finally:
        engine.gate.set()
        writer.close()


async def attached(client, job_id: str) -> None:  # noqa: ANN001
    """Until a listener follows the running job `job_id` live (a sleep let a late one replay the log)."""
    admission = client.app[SCHEDULER_KEY].admission
    await until(
        lambda: (job := admission.live_job(job_id)) is not None and job.subscribers, "a live listener"
    )


async def test_events_after_a_seq_not_yet_logged_skips_the_live_lines_up_to_it(worker):
    """A client that saw seq 1..N (say from another node) re-attaches with `after=N` while the log holds
    fewer: the live lines up to N are not sent again."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    sections = [{"idx": i, "text": f"s{i}."} for i in range(3)]
    job_id = (await (await client.post("/synth_batch?async=1", json={"sections": sections})).json())["job_id"]
    events = asyncio.ensure_future(client.get(f"/jobs/{job_id}/events?after=4"))
    await attached(client, job_id)  # while the log holds only `start`
    engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        lines = await read_ndjson(await events)
    assert [line["seq"] for line in lines] == list(range(5, lines[-1]["seq"] + 1))
    assert lines[-1]["event"] == "done"


async def test_events_after_past_a_live_done_ends_the_stream(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    job_id = (
        await (
            await client.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "a."}]})
        ).json()
    )["job_id"]
    events = asyncio.ensure_future(client.get(f"/jobs/{job_id}/events?after=50"))
    await attached(client, job_id)
    engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        assert await read_ndjson(await events) == []


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


async def test_delete_cancels_the_sections_not_yet_started(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    response = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": i, "text": "abc."} for i in range(5)]}
    )
    job_id = (await response.json())["job_id"]
    cancel = await client.delete(f"/jobs/{job_id}")
    assert cancel.status == 200
    engine.gate.set()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert events[-1]["event"] == "done" and events[-1]["cancelled"] is True
    assert events[-1]["ok_count"] < 5
    result = await client.get(f"/jobs/{job_id}/result")
    assert result.status == 200 and (await result.json())["status"] == "cancelled"


async def test_repeated_section_is_served_from_the_cache(worker, tmp_path):
    engine = ToneEngine()
    client = await worker(engine, cache_max_bytes=10_000_000)
    body = {"text": "캐시 테스트.", "output_path": str(tmp_path / "one.wav")}
    first = await (await client.post("/synth", json=body)).json()
    second = await (
        await client.post("/synth", json={**body, "output_path": str(tmp_path / "two.wav")})
    ).json()
    assert "cached" not in first and second["cached"] is True
    assert engine.calls == ["캐시 테스트."]
    assert (tmp_path / "one.wav").read_bytes() == (tmp_path / "two.wav").read_bytes()


async def test_a_cache_that_cannot_keep_a_section_does_not_fail_it(worker, tmp_path, settings):
    """The cache is filled after `ok` (a full state disk, here a file where its folder was): the section
    stays ok, once, and its audio is served."""
    client = await worker(ToneEngine(), cache_max_bytes=10_000_000)
    cache = Path(settings.state_dir) / "cache"
    cache.rmdir()
    cache.write_bytes(b"not a folder")
    body = {"text": "캐시 없이.", "output_path": str(tmp_path / "kept.wav")}
    answer = await (await client.post("/synth", json=body)).json()
    assert answer["status"] == "ok" and (tmp_path / "kept.wav").is_file()
    batch = {"sections": [{"idx": 0, "text": "배치도."}], "stream": False}
    result = await (await client.post("/synth_batch", json=batch)).json()
    assert (result["status"], result["ok_count"], result["fail_count"]) == ("ok", 1, 0)


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


async def test_unknown_job_is_404(worker):
    client = await worker()
    for path in ("/jobs/nope/status", "/jobs/nope/result", "/jobs/nope/events", "/jobs/../etc"):
        response = await client.get(path)
        assert response.status == 404, path
    assert (await client.delete("/jobs/nope")).status == 404


async def test_a_batch_larger_than_the_queue_bound_is_400_not_a_retryable_429(worker):
    client = await worker(max_queue=3)
    response = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": i, "text": "a."} for i in range(4)]}
    )
    assert response.status == 400 and "Retry-After" not in response.headers
    assert (await response.json())["error"] == "TooManySections: 4 sections, the limit is 3"


async def test_a_section_index_in_the_audio_url_is_read_as_written(worker):
    """One URL per section: `+0`, `00`, ` 0`, `0_0` or an Arabic-Indic zero are not section 0."""
    client = await worker()
    body = {"sections": [{"idx": 0, "text": "a."}], "stream": False}
    job_id = (await (await client.post("/synth_batch", json=body)).json())["job_id"]
    assert (await client.get(f"/jobs/{job_id}/sections/0/audio")).status == 200
    for written in ("+0", "00", "-0", "%200", "0_0", "%D9%A0"):
        response = await client.get(f"/jobs/{job_id}/sections/{written}/audio")
        assert response.status == 400, written
        assert (await response.json())["error"] == "BadRequest: the section index must be an integer"


def held_for_sending(client) -> int:
    """Bytes the server holds for its open connections, not yet taken by the clients."""
    handlers = client.server.runner.server.connections
    return sum(h.transport.get_write_buffer_size() for h in handlers if h.transport is not None)


async def test_a_section_wav_goes_out_in_pieces_to_callers_that_do_not_read(worker):
    """The wav was read whole and handed to the socket for each caller: a caller that never reads
    kept it all in the worker's memory (40 callers of a 28 MB section: 2 GB)."""
    client = await worker(ToneEngine(seconds_per_char=0.1))
    body = {"sections": [{"text": "가" * 2000}], "speed_factor": 0.25, "stream": False}
    job_id = (await (await client.post("/synth_batch", json=body)).json())["job_id"]
    size = int((await client.head(f"/jobs/{job_id}/sections/0/audio")).headers["Content-Length"])
    assert size > 30_000_000
    loop = asyncio.get_running_loop()
    request = b"GET /jobs/%s/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % job_id.encode()
    readers = []
    for _ in range(2):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.setblocking(False)
        await loop.sock_connect(reader, (client.host, client.port))
        await loop.sock_sendall(reader, request)
        readers.append(reader)
    try:
        await asyncio.sleep(seconds(1))  # every answer written as far as the sockets take it
        assert held_for_sending(client) < 2 * 1024 * 1024
    finally:
        for reader in readers:
            reader.close()
    whole = await client.get(f"/jobs/{job_id}/sections/0/audio")
    assert len(await whole.read()) == size


async def test_jobs_running_returns_to_zero_after_work(worker):
    client = await worker()
    await read_ndjson(await client.post("/synth_batch", json={"sections": [{"idx": 0, "text": "a."}]}))
    health = await (await client.get("/health")).json()
    assert health["jobs_running"] == 0 and health["queue"] == 0
    assert health["ttfa_ms"]["count"] >= 1 and client.app[SCHEDULER_KEY].queue_size() == 0


async def test_default_output_goes_to_the_outputs_folder_of_the_state_dir(worker, settings):
    client = await worker()
    events = await read_ndjson(
        await client.post("/synth_batch", json={"sections": [{"idx": 7, "text": "a."}]})
    )
    ok = next(e for e in events if e["event"] == "progress" and e["status"] == "ok")
    job_id = events[0]["job_id"]
    assert ok["wav_path"] == str(Path(settings.state_dir) / "outputs" / job_id / "s07.wav")
    assert Path(ok["wav_path"]).stat().st_size > 44


@pytest.mark.parametrize("after", ["1_000", " 1", "+1", "-1", "١", "1e3", "9" * 30, ""])
async def test_events_after_must_be_a_plain_decimal_seq(worker, after):
    client = await worker()
    job = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "가."}]})).json()
    response = await client.get(f"/jobs/{job['job_id']}/events", params={"after": after})
    assert response.status == 400
    assert (await response.json())["error"].startswith("BadRequest: after must be")
