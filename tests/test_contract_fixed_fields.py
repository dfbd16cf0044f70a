"""The fields the user's interface document fixes, by name and type, on a worker with the espeak-ng engine
as `serve` builds it, read by the user's own streaming client (its helper, as the document writes it).

The golden files (tests/test_wire_golden_live.py) record the whole wire and may be rewritten when the
wire is meant to change; these fields may not: a rename here is a broken caller, whatever the goldens say.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from npu_worker import openapi
from tests.timing import seconds

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"
NAMED_ERROR = re.compile(r"^[A-Z][A-Za-z]+: \S")
DEVICES = ("qnn", "cpu", "cuda")
Number = (int, float)


def synth_batch_streaming(
    base: str, sections: list[dict], on_progress: Callable[[int, dict], None] | None = None
) -> dict:
    """The user's helper (streaming_client.py in their document), its base URL a parameter and its
    timeout (3600 s there) the tests' own, so a worker that stops answering fails the test."""
    body = json.dumps({"sections": sections, "stream": True}).encode("utf-8")
    req = urllib.request.Request(
        f"{base}/synth_batch", data=body, headers={"Content-Type": "application/json"}
    )
    results = []
    with urllib.request.urlopen(req, timeout=seconds(20)) as resp:
        for raw_line in resp:
            line = raw_line.decode("utf-8").strip()
            if not line:
                continue
            event = json.loads(line)
            if event["event"] == "progress" and event.get("status") == "ok":
                results.append(event)
                if on_progress:
                    on_progress(event["idx"], event)
            elif event["event"] == "done":
                break
            elif event["event"] == "error":
                if on_progress:
                    on_progress(event.get("idx", -1), event)
    return {"sections": results, "wav_paths": [r["wav_path"] for r in results]}


def has(body: dict, **types: Any) -> None:
    """`body` carries each field, with a value of its type (a type or a tuple of them), or that value."""
    for name, kind in types.items():
        assert name in body, (name, body)
        value = body[name]
        if isinstance(kind, type | tuple):
            assert isinstance(value, kind) and (kind is bool or not isinstance(value, bool)), (name, body)
        else:
            assert value == kind, (name, body)


def check_stream_event(event: dict) -> None:
    kind = event["event"]
    if kind == "start":
        has(event, total=int, backend=str, device=str)
        assert event["device"] in DEVICES
    elif kind == "progress" and event["status"] == "synth":
        has(event, idx=int)
    elif kind == "progress":
        has(event, idx=int, status="ok", wav_path=str, duration_sec=Number, elapsed_sec=Number)
    elif kind == "error":
        has(event, idx=int, status="fail", error=str)
        assert NAMED_ERROR.match(event["error"]), event
    elif kind == "done":
        has(event, total=int, ok_count=int, fail_count=int, elapsed_total_sec=Number)


async def test_the_users_streaming_client_reads_every_slide_as_it_is_done(worker, tmp_path):
    client = await worker(engine=None, backend="espeak")
    slides = json.loads(LECTURE.read_text(encoding="utf-8"))["sections"][:4]
    sections = [
        {"idx": s["idx"], "text": s["text"], "output_path": f"{tmp_path}/s{s['idx']:02d}.wav"} for s in slides
    ]
    sections.insert(2, {"idx": 99, "text": "   ", "output_path": f"{tmp_path}/s99.wav"})  # fails alone
    seen: list[tuple[int, dict]] = []
    base = str(client.make_url("")).rstrip("/")
    result = await asyncio.to_thread(synth_batch_streaming, base, sections, lambda i, e: seen.append((i, e)))
    assert [i for i, _ in seen] == [0, 1, 99, 2, 3]  # each slide as it is done, in order; the batch goes on
    assert result["wav_paths"] == [f"{tmp_path}/s{i:02d}.wav" for i in (0, 1, 2, 3)]
    for _, event in seen:
        check_stream_event(event)
    assert seen[2][1]["error"].startswith("EmptyText: ")

    raw = await client.post("/synth_batch", json={"sections": sections})
    assert raw.headers["Content-Type"].startswith("application/x-ndjson")
    assert (raw.headers["Cache-Control"], raw.headers["X-Accel-Buffering"]) == ("no-cache", "no")
    events = [json.loads(line) for line in (await raw.read()).splitlines() if line.strip()]
    assert events[0]["event"] == "start" and events[0]["total"] == 5 and events[-1]["event"] == "done"
    for event in events:
        check_stream_event(event)
    order = [(e["idx"], e["status"]) for e in events if e["event"] in ("progress", "error")]
    assert order == [
        (s["idx"], step) for s in sections for step in ("synth", "fail" if s["idx"] == 99 else "ok")
    ]
    assert (events[-1]["ok_count"], events[-1]["fail_count"]) == (4, 1)


async def test_synth_health_polling_and_the_error_body_keep_their_fixed_fields(worker, tmp_path):
    client = await worker(engine=None, backend="espeak")
    health = await (await client.get("/health")).json()
    has(health, status="ok", loaded=bool, load_seconds=Number, backend=str, device=str, version="v1.0")
    assert "ref_wav" in health and health["device"] in DEVICES and health["loaded"] is True
    assert list(health)[:7] == ["status", "loaded", "load_seconds", "backend", "device", "ref_wav", "version"]

    body = {
        "text": "안녕하세요.",
        "lang": "ko",
        "output_path": f"{tmp_path}/s00.wav",
        "speed_factor": 1.0,
        "ref_wav": None,
    }
    synth = await (await client.post("/synth", json=body)).json()
    has(
        synth, status="ok", output=str, wav_path=str, duration_sec=Number, sample_rate=int, elapsed_sec=Number
    )
    has(synth, rtf=Number, engine=str, device=str)
    assert synth["output"] == synth["wav_path"] == body["output_path"] and synth["sample_rate"] == 24000

    for refused in (
        {"text": "a"},
        {"output_path": f"{tmp_path}/x.wav"},
        {"text": " ", "output_path": body["output_path"]},
    ):
        answer = await client.post("/synth", json=refused)
        error = await answer.json()
        assert answer.status == 400 and list(error) == ["status", "error", "traceback", "fallback"]
        assert error["status"] == "fail" and NAMED_ERROR.match(error["error"]), error

    queued = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "하나."}, {"idx": 1, "text": ""}]}
    )
    accepted = await queued.json()
    assert queued.status == 200 and set(accepted) == {"job_id", "status", "total"}
    has(accepted, job_id=str, status="queued", total=int)
    job = accepted["job_id"]
    async with asyncio.timeout(10):
        while (status := await (await client.get(f"/jobs/{job}/status")).json())["status"] != "done":
            await asyncio.sleep(0.01)
    has(status, job_id=job, done=int, total=int, ok=int, fail=int, elapsed_sec=Number)
    assert "current_idx" in status and (status["ok"], status["fail"]) == (1, 1)
    states = openapi.document()["components"]["schemas"]["JobStatus"]["properties"]["status"]["enum"]
    assert states == ["queued", "running", "done", "cancelled", "interrupted"]  # the document's, for clients
    result = await (await client.get(f"/jobs/{job}/result")).json()
    has(result, job_id=job, status="done", sections=list, wav_paths=list, elapsed_total_sec=Number)
    assert [s["idx"] for s in result["sections"]] == [0, 1] and len(result["wav_paths"]) == 1


async def test_the_preview_socket_keeps_its_audio_events_and_a_small_first_chunk(worker):
    client = await worker(engine=None, backend="espeak")
    async with client.ws_connect("/ws") as ws:
        await ws.send_str(json.dumps({"type": "synth", "text": "안녕하세요. 반갑습니다."}))
        frames: list[Any] = []
        while True:
            message = await ws.receive(timeout=10)
            if message.type == aiohttp.WSMsgType.BINARY:
                frames.append(len(message.data))
                continue
            event = json.loads(message.data)
            frames.append(event)
            if event["event"] == "done":
                break
    events = {f["event"]: f for f in frames if isinstance(f, dict)}
    has(events["audio_start"], idx=0, sample_rate=int, format="pcm_s16le", channels=int)
    has(events["audio_end"], idx=0, samples=int, chunks=int)
    has(events["first_audio"], idx=0, ttfa_ms=Number)
    pcm = [f for f in frames if isinstance(f, int)]
    assert sum(pcm) == 2 * events["audio_end"]["samples"] and len(pcm) == events["audio_end"]["chunks"]
    assert pcm[0] <= 2 * events["audio_start"]["sample_rate"] * 40 // 1000  # the first chunk: 40 ms at most
    assert frames.index(pcm[0]) < frames.index(events["first_audio"])  # after the frame it measures
    check_stream_event(events["done"])
