"""Requests /ws refuses before they start: each is an `error` event naming why, and the socket stays."""

from __future__ import annotations

import asyncio
import threading

from tests.test_ws_support import batch, connect, run_request
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def refusal(ws, message: dict) -> dict:
    await ws.send_json(message)
    event = await ws.receive()
    assert isinstance(event, dict) and event["event"] == "error" and event["idx"] is None
    return event


async def test_a_full_queue_is_refused_with_queue_full(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=2)
    held = await client.post("/synth_batch?async=1", json={"sections": [{"text": "하나."}, {"text": "둘."}]})
    assert held.status == 200
    ws = await connect(client)
    assert (await refusal(ws, batch("넘침.")))["error"].startswith("QueueFull:")
    engine.gate.set()
    job_id = (await held.json())["job_id"]
    async with asyncio.timeout(seconds(20)):
        await (await client.get(f"/jobs/{job_id}/events")).read()  # ends with the held job's done
    assert (await run_request(ws, batch("이제 됨."))).done["ok_count"] == 1
    await ws.close()


async def test_a_request_while_the_engine_loads_is_refused_with_loading(worker):
    engine = ToneEngine()
    loaded = threading.Event()
    engine.load = lambda: loaded.wait(30)  # type: ignore[method-assign]
    client = await worker(engine, wait_loaded=False)
    ws = await connect(client)
    try:
        assert (await refusal(ws, batch("아직.")))["error"].startswith("Loading:")
    finally:
        loaded.set()
    await ws.close()


async def test_an_output_path_outside_the_roots_is_refused(worker):
    client = await worker()
    ws = await connect(client)
    message = {"type": "synth", "text": "가.", "output_path": "/etc/npu-worker-test.wav"}
    assert (await refusal(ws, message))["error"].startswith("OutputPathNotAllowed:")
    assert (await run_request(ws, batch("다음은 됨."))).done["ok_count"] == 1
    await ws.close()


async def test_a_preview_larger_than_the_queue_bound_names_the_queue_bound(worker):
    """A `--max-queue 1` worker refused a 10-section preview with "10 sections, the limit is 1", as if
    --max-sections were 1: the setting that bounds it is named."""
    client = await worker(max_queue=1)
    ws = await connect(client)
    refused = await refusal(ws, batch(*(f"{n}번 문장." for n in range(10))))
    assert refused["error"] == (
        "TooManySections: 10 sections, the limit is 1 (--max-queue: a batch's sections are queued at once)"
    )
    assert (await run_request(ws, batch("하나는 됨."))).done["ok_count"] == 1
    await ws.close()
