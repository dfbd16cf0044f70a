"""A WebSocket preview goes before the queued sections of a running batch (DESIGN: priorities)."""

from __future__ import annotations

import json

from tests.test_ws_support import ChunkGate, connect, receive_until_done
from tests.tone_engine import ToneEngine

SLIDES = [f"슬라이드 {i}번의 대본입니다." for i in range(39)]
PREVIEW = "미리 듣기 문장."


async def test_preview_runs_right_after_the_section_that_is_running_when_it_arrives(worker):
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.1, delay_per_chunk=0.01)
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine)
    try:
        response = await client.post(
            "/synth_batch", json={"sections": [{"idx": i, "text": t} for i, t in enumerate(SLIDES)]}
        )
        while json.loads(await response.content.readline())["event"] != "progress":
            pass  # the batch's section 0 is now with the engine, which waits at the gate
        ws = await connect(client)
        await ws.send_json({"type": "synth", "text": PREVIEW})
        start = await ws.receive()
        assert isinstance(start, dict) and start["event"] == "start"  # the preview is queued
        gate.open()
        transcript = await receive_until_done(ws)
        await ws.close()
        assert transcript.events("first_audio") and transcript.done["ok_count"] == 1
        # The preview waited for the running section only, not for the other 38 slides.
        assert engine.calls[:2] == [SLIDES[0], PREVIEW]
        lines = [json.loads(line) async for line in response.content if line.strip()]
        assert lines[-1]["event"] == "done" and lines[-1]["ok_count"] == 39
    finally:
        gate.open()
