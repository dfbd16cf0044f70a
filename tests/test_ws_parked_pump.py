"""A `/ws` request's pump has no task while its peer takes every write at once (`RequestStream.start`,
`Subscription.park`): its `start` is written in the handler's own step (the journal publishes a job's
`start` at once on the loop), its audio by the hand-over's drains, its `done` ends it in the drain that
brought it. A task's first step and its step at `done` were a turn of the loop each a preview
(benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 56). The same frames."""

from __future__ import annotations

import asyncio
from asyncio import selector_events
from typing import Any

import pytest

from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from tests.test_ws_support import batch, connect, receive_until_done
from tests.tone_engine import ToneEngine


class WritesBy:
    """Who made each write to the server's side of one connection: a task's name, or "" (a callback
    of the loop: the hand-over's drain)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, server_port: int) -> None:
        self.writers: list[str] = []
        transport_class = selector_events._SelectorSocketTransport
        original = transport_class.write

        def write(transport: Any, data: Any) -> None:
            if transport.get_extra_info("sockname")[1] == server_port:
                task = asyncio.current_task()
                self.writers.append("" if task is None else task.get_name())
            original(transport, data)

        monkeypatch.setattr(transport_class, "write", write)


async def test_a_preview_read_at_once_is_written_with_no_pump_task_and_is_whole(worker, monkeypatch):
    engine = ToneEngine(chunk_seconds=0.05)
    client = await worker(engine)
    ws = await connect(client)
    texts = ("가" * 10, "나" * 10)
    try:
        await ws.send_json(batch("가"))  # (the handshake and a first request: written before counting)
        await receive_until_done(ws)
        writes = WritesBy(monkeypatch, client.port)
        await ws.send_json(batch(*texts))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()

    assert [w for w in writes.writers if w.startswith("ws-job-")] == []  # (before: `start` and the end)
    assert writes.writers[0] != ""  # `start`: in the handler's step, not a drain's turn after it
    assert transcript.items[0]["event"] == "start"  # type: ignore[index]
    for idx, text in enumerate(texts):
        expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
        assert transcript.section_pcm(idx) == expected
    assert transcript.done["ok_count"] == 2


async def test_a_second_request_after_a_parked_pump_ended_is_not_busy(worker):
    engine = ToneEngine(chunk_seconds=0.05)
    client = await worker(engine)
    ws = await connect(client)
    try:
        for text in ("가" * 5, "나" * 5, "다" * 5):
            await ws.send_json(batch(text))
            transcript = await receive_until_done(ws)
            assert [e["event"] for e in transcript.events() if e["event"] in ("error", "done")] == ["done"]
    finally:
        await ws.close()
