"""The speech-stream socket plays its utterances in order: a later utterance's first sentence, queued
while an earlier one of the same socket still plays, does not take the engine from that one's sentence
(`jobs/lending.py`): its audio could only wait behind it, and the caller heard a gap for nothing."""

from __future__ import annotations

import json

import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_openai_stream_ws import receive, receive_until, stream_url
from tests.test_preemption import PausableTone, gated_worker, wait_until


async def test_a_later_utterance_on_the_same_socket_does_not_pause_the_one_being_heard(worker):
    engine = PausableTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    admission = client.app[SCHEDULER_KEY].admission
    try:
        async with websockets.connect(stream_url(client), max_size=None) as ws:
            gate.allow(2)
            await ws.send(json.dumps({"type": "input.text", "text": "가" * 50 + "."}))
            await ws.send(json.dumps({"type": "input.done"}))
            while not isinstance(await receive(ws), bytes):  # the first utterance is heard
                pass
            await wait_until(lambda: len(engine.made) == 2)
            await ws.send(json.dumps({"type": "input.text", "text": "나" * 10 + "."}))
            await ws.send(json.dumps({"type": "input.done"}))
            await wait_until(lambda: len(admission.live_jobs()) == 2)  # queued behind the first
            gate.open()
            await receive_until(ws, "session.done")
            assert (await receive_until(ws, "session.done"))[-1]["utterance_index"] == 1
    finally:
        gate.open()
    first = [text.startswith("가") for text in engine.made]
    assert first == sorted(first, reverse=True)  # every chunk of the first before any of the second
