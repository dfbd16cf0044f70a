"""The v1 HTTP contract (PROTOCOL §1–5) on a real socket, with the tone test engine: `/health` and `/synth`.
(`/synth_batch`: test_http_batch.py; `/jobs/{id}/…`: test_http_jobs.py.)"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import wave
from pathlib import Path

from tests.timing import seconds
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
    assert response.status == 200 and "Retry-After" not in response.headers
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
        # a poller (a load balancer, a client's wait) is told when to ask again, as a refused request is
        assert response.headers.get("Retry-After") == "1"
        body = await response.json()
        assert body["loaded"] is False and body["status"] == "loading"
        assert body["load_phase"] == "tuning the tones"
        # the configured backend (espeak) by the name it reports once loaded, not the setting's "espeak"
        assert body["backend"] == "espeak-ng"
        synth = await client.post("/synth", json={"text": "x", "output_path": "/tmp/x.wav"})
        assert synth.status == 503
        assert (await synth.json())["error"].startswith("Loading:")
        # once the kept jobs are read (none here; on a busy CI worker not yet at this point, a 503), /jobs
        # answers while the engine still loads (docs/protocol.md)
        async with asyncio.timeout(seconds(30)):
            while (jobs := await client.get("/jobs")).status == 503:
                assert (await jobs.json())["error"].startswith("Loading:")
                await asyncio.sleep(0.05)
        assert jobs.status == 200 and (await jobs.json())["jobs"] == []
        assert (await client.get("/health")).status == 503  # the engine still loading
        assert (await client.get("/jobs/nope/status")).status == 404
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
