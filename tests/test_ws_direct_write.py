"""A `/ws` pump waiting on its subscription writes what a hand-over's drain brought in that drain's own
turn of the loop (`RequestStream._write_direct`), not from its task woken a turn later: the same frames."""

from __future__ import annotations

import asyncio
import threading
from asyncio import selector_events
from typing import Any

import pytest

from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from tests.test_ws_support import Transcript, batch, connect, receive_until_done
from tests.tone_engine import ToneEngine


class WritesBy:
    """The writes to the server's side of one connection, by who made them: the pump's task or a
    callback of the loop (the hand-over's drain)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, server_port: int) -> None:
        self.by_task = 0
        self.by_drain = 0
        transport_class = selector_events._SelectorSocketTransport
        original = transport_class.write

        def write(transport: Any, data: Any) -> None:
            if transport.get_extra_info("sockname")[1] == server_port:
                if asyncio.current_task() is None:
                    self.by_drain += 1
                else:
                    self.by_task += 1
            original(transport, data)

        monkeypatch.setattr(transport_class, "write", write)


async def test_a_waiting_pump_writes_the_drain_s_audio_in_the_drain_and_the_stream_is_whole(
    worker, monkeypatch
):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    client = await worker(engine)
    ws = await connect(client)
    texts = ("가" * 10, "나" * 10)
    try:
        await ws.send_json(batch(*texts))
        seen = Transcript()
        while not (seen.items and seen.items[-1].get("event") == "progress"):
            item = await ws.receive()  # section 0 started: the engine waits on the gate, the pump on
            assert isinstance(item, dict)  # its subscription
            seen.items.append(item)
        writes = WritesBy(monkeypatch, client.port)
        engine.gate.set()
        transcript = await receive_until_done(ws, seen)
    finally:
        engine.gate.set()
        await ws.close()

    assert writes.by_drain >= 1  # (the code before wrote every burst from the pump's task)
    for idx, text in enumerate(texts):
        expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
        assert transcript.section_pcm(idx) == expected
    assert transcript.done["ok_count"] == 2
