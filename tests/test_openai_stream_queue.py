"""WS /v1/audio/speech/stream under a full queue: an utterance is spoken whole and in order, or ends
with one error at the first sentence that could not be queued."""

from __future__ import annotations

import asyncio
import json

import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.openai_compat import utterance
from tests.test_openai_stream_ws import receive, receive_until, stream_url
from tests.test_ws_support import ChunkGate, connect, receive_until_done
from tests.timing import until
from tests.tone_engine import ToneEngine

FIVE = [f"문장 {n}번입니다." for n in range(5)]
# (its name once, as the code: it was "QueueFull: 1 sections are waiting (bound 1), for 0.3 s; ...")
WAITED_TOO_LONG = "1 section is waiting (bound 1), for 0.3 s; the rest of this utterance is not spoken"


def of_type(items, kind: str) -> list[dict]:
    return [i for i in items if isinstance(i, dict) and i["type"] == kind]


async def held_full(worker) -> tuple[ToneEngine, ChunkGate, object]:
    """A worker with room for one queued section and an engine that waits on a gate."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    return engine, gate, await worker(engine, max_queue=1)


async def another_callers_preview(client, engine: ToneEngine):
    """Another caller's /ws preview, held in the engine: the queue has no room until the gate opens."""
    preview = await connect(client)
    await preview.send_json({"type": "synth", "text": "다른 사람"})
    await until(lambda: engine.calls, "the other caller's section on the engine")
    return preview


async def test_sentences_refused_for_a_full_queue_wait_their_turn_and_play_in_order(worker):
    """With --max-queue 1, sentences 1-3 of five got QueueFull at once and 0 and 4 played: the
    listener heard a gap. They now wait for room, in order, and the utterance plays whole."""
    engine = ToneEngine(chunk_seconds=0.05)
    client = await worker(engine, max_queue=1)
    async with websockets.connect(stream_url(client), max_size=None) as ws:
        await ws.send(json.dumps({"type": "input.text", "text": " ".join(FIVE)}))
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    assert of_type(items, "error") == []
    assert [s["sentence_text"] for s in of_type(items, "audio.start")] == FIVE
    assert items[-1]["total_sentences"] == 5
    assert engine.calls == FIVE


async def test_a_queue_full_past_the_wait_ends_the_utterance_with_one_error(worker, monkeypatch):
    """Held full by another caller for longer than the wait: one QueueFull for the sentence that
    could not be queued, no later sentence of that utterance spoken; the next utterance is."""
    monkeypatch.setattr(utterance, "QUEUE_WAIT_SECONDS", 0.3)
    engine, gate, client = await held_full(worker)
    scheduler = client.app[SCHEDULER_KEY]
    try:
        preview = await another_callers_preview(client, engine)
        async with websockets.connect(stream_url(client), max_size=None) as ws:
            await ws.send(json.dumps({"type": "input.text", "text": " ".join(FIVE[:3]) + " "}))
            error = await receive(ws)
            assert (error["type"], error["code"], error["sentence_index"]) == ("error", "QueueFull", 0)
            assert error["message"] == WAITED_TOO_LONG, error
            await ws.send(json.dumps({"type": "input.text", "text": " ".join(FIVE[3:])}))
            await ws.send(json.dumps({"type": "input.done"}))
            done = await receive(ws)
            assert done == {"type": "session.done", "utterance_index": 0, "total_sentences": 1}
            gate.open()
            await receive_until_done(preview)
            await ws.send(json.dumps({"type": "input.text", "text": "다음 발화."}))
            await ws.send(json.dumps({"type": "input.done"}))
            items = await receive_until(ws, "session.done")
            assert of_type(items, "error") == []
            assert [s["sentence_text"] for s in of_type(items, "audio.start")] == ["다음 발화."]
        await preview.close()
    finally:
        gate.open()
    assert engine.calls == ["다른 사람", "다음 발화."]
    assert scheduler.queue_size() == 0


async def test_a_sentence_waiting_for_room_stops_when_the_socket_closes(worker):
    engine, gate, client = await held_full(worker)
    scheduler = client.app[SCHEDULER_KEY]
    try:
        preview = await another_callers_preview(client, engine)
        async with websockets.connect(stream_url(client), max_size=None) as ws:
            await ws.send(json.dumps({"type": "input.text", "text": FIVE[0] + " "}))
            await until(lambda: scheduler.stats_snapshot()["jobs_refused"], "the sentence refused once")
        await until(lambda: not stream_tasks(), "the socket's tasks to end while the queue is full")
        gate.open()
        await receive_until_done(preview)
        await preview.close()
    finally:
        gate.open()
    await until(lambda: not scheduler.jobs_running(), "every job to end")
    assert engine.calls == ["다른 사람"]


def stream_tasks() -> list[asyncio.Task]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("speech-stream")]
