"""`GET /ws`: a message (up to --max-body-bytes, out of the body budget once whole) is not kept once
it is decoded: the route's loop variable held the last one while the request it started ran, though
the message generator had let it go."""

from __future__ import annotations

import json
import tracemalloc

from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def test_a_ws_message_is_not_kept_while_its_request_runs(worker):
    engine = ToneEngine()
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    padding = 3_000_000  # a synth request of 3 MB, nearly all of it JSON's whitespace
    text = json.dumps({"type": "synth", "text": "하나.", "audio": False}).replace(",", "," + " " * padding, 1)
    large: list[int] = []
    async with client.ws_connect("/ws") as ws:
        tracemalloc.start(1)
        try:
            await ws.send_str(text)
            assert json.loads((await ws.receive(timeout=seconds(10))).data)["event"] == "start"
            await until(lambda: engine.calls, "the request being spoken")  # (the gate holds its chunks)
            large = [trace.size for trace in tracemalloc.take_snapshot().traces if trace.size > padding // 2]
        finally:
            tracemalloc.stop()
            gate.open()
        events = [json.loads((await ws.receive(timeout=seconds(10))).data)["event"] for _ in range(3)]
    assert events == ["progress", "progress", "done"], events  # (the request ran as ever)
    assert large == []
