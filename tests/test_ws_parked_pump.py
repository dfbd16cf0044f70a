"""A `/ws` request's pump has no task while its peer takes every write at once (`RequestStream.start`,
`Subscription.park`): its `start` is written in the handler's own step (the journal publishes a job's
`start` at once on the loop), its audio by the hand-over's drains, its `done` ends it in the drain that
brought it. A task's first step and its step at `done` were a turn of the loop each a preview
(benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 56). The same frames."""

from __future__ import annotations

import asyncio
import dataclasses
from asyncio import selector_events
from typing import Any

import aiohttp
import pytest

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from npu_worker.server import listen
from npu_worker.ws_server.request_stream import RequestStream
from tests.test_ws_support import ChunkGate, batch, connect, live_job, receive_until_done
from tests.timing import seconds, until
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


async def test_a_socket_closed_while_its_pump_is_parked_ends_the_pump_with_no_task_and_no_lost_stream(
    worker, caplog
):
    """The pump parked (the engine holds the request): the socket's close ends it where it is. A parked
    reader still set when the subscription closed was woken by the close's end, and a task read on to
    find the stream "ended without its done" (a warning, a `stream_lost` answer to a closed socket)."""
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine)
    ws = await connect(client)
    try:
        await ws.send_json(batch("가" * 30))
        start = await ws.receive()
        job = live_job(client, start["job_id"])  # type: ignore[index]
        gate.allow(2)
        while not isinstance(await ws.receive(), bytes):  # audio went out: the pump is parked
            pass
        await ws.close()
        gate.allow(1)  # a next chunk: the runner sees the close's cancel there (it may wait at the gate)
        async with asyncio.timeout(seconds(10)):  # the close cancels the job
            while job.done_event is None:
                await asyncio.sleep(0.01)
        for _ in range(5):
            await asyncio.sleep(0.01)
    finally:
        gate.open()
    assert job.done_event.cancelled and job.subscribers == []
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("ws-job-")]
    assert "without its done" not in caplog.text


async def test_a_failure_of_the_parked_pump_s_direct_write_ends_the_request_with_an_error_and_1011(
    worker, monkeypatch
):
    """The direct write raises while parked (a fault made in the pump's own handling of a chunk): the
    frames before it, then the `error` and a 1011 close, as a pump's task failing says it (where the
    failure was dropped, the stream went on to its `done` without the chunk)."""
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine)
    handled: list[object] = []
    on_audio = RequestStream._on_audio

    def third_fails(stream: RequestStream, chunk: Any) -> None:
        handled.append(chunk)
        if len(handled) == 3:
            raise ValueError("a fault in the pump")
        on_audio(stream, chunk)

    monkeypatch.setattr(RequestStream, "_on_audio", third_fails)
    ws = await connect(client)
    items: list[Any] = []
    try:
        await ws.send_json(batch("가" * 30))
        await ws.receive()  # start
        gate.allow(2)
        while not isinstance(await ws.receive(), bytes):  # parked, audio out
            pass
        gate.open()  # the third chunk, the one the pump fails on, and the rest
        while not (items and isinstance(items[-1], dict) and items[-1]["event"] == "done"):
            try:
                items.append(await ws.receive())
            except ConnectionError as closed:
                items.append(str(closed))
                break
    finally:
        gate.open()
    ends = [i if isinstance(i, str) else i["event"] for i in items if not isinstance(i, bytes)]
    assert ends[-2:] == ["error", f"socket ended: {aiohttp.WSMsgType.CLOSE} 1011"], ends
    assert items[-2]["error"].startswith("InternalError: ")


async def test_a_shutdown_waits_for_a_parked_pump_s_done_before_the_1001(settings):
    """A section the drain's grace cut (`--shutdown-grace`): the socket's close at shutdown cancels its
    job and waits (GOING_AWAY_SECONDS) for the `done`, which the engine thread hands over at its next
    chunk. A parked pump must read on in a task for it: ended where it was parked, its caller got the
    `error` and the 1001 but never the `done`."""
    engine = ToneEngine(chunk_seconds=0.1, delay_per_chunk=0.2)
    app = await asyncio.to_thread(build_app, dataclasses.replace(settings, shutdown_grace=0.1), engine)
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    closing: asyncio.Task[None] | None = None
    try:
        await until(lambda: app[SCHEDULER_KEY].loaded, "the engine to load")
        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(f"http://127.0.0.1:{listener.port}/ws", autoclose=False)
            await ws.send_json(batch("가" * 400))  # ≈ 8 s of audio, a chunk each 0.2 s
            while (await ws.receive(timeout=seconds(10))).type != aiohttp.WSMsgType.BINARY:
                pass  # audio went out: the pump is parked
            closing = asyncio.create_task(listener.close())
            texts = []
            while (message := await ws.receive(timeout=seconds(10))).type in (
                aiohttp.WSMsgType.TEXT,
                aiohttp.WSMsgType.BINARY,
            ):
                if message.type == aiohttp.WSMsgType.TEXT:
                    texts.append(message.json())
            await ws.close()
    finally:
        if closing is None:
            await listener.close()
        else:
            await closing
    assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
    assert [t["event"] for t in texts][-2:] == ["error", "done"]
    error, done = texts[-2:]
    assert error["error"].startswith("QueueFull: the worker is shutting down")
    assert done["cancelled"] is True
