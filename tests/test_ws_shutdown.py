"""GET /ws when the worker shuts down: after the drain, every socket is told and closed with 1001."""

from __future__ import annotations

import asyncio

import aiohttp

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.server import listen
from tests.test_ws_support import ChunkGate, batch
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

TEXT_OR_PCM = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)


async def test_a_shutdown_ends_the_running_request_and_closes_every_socket_with_1001(settings):
    """They were left silent until aiohttp's shutdown timeout cut them (1006): a request got neither
    its `done` nor a word of why, and an idle socket could not tell a shutdown from a network fault."""
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate  # type: ignore[assignment]
    app = await asyncio.to_thread(build_app, settings, engine)
    scheduler = app[SCHEDULER_KEY]
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    closing: asyncio.Task[None] | None = None
    try:
        await until(lambda: scheduler.loaded, "the engine to load")
        url = f"http://127.0.0.1:{listener.port}/ws"
        async with aiohttp.ClientSession() as http:
            idle = await http.ws_connect(url)
            ws = await http.ws_connect(url, autoclose=False)
            await ws.send_json(batch("가" * 5, "나" * 5, "다" * 5))  # one 0.1 s chunk each
            gate.allow(1)  # section 0 is made; section 1 waits in the engine
            events = []
            while (events[-1:] or [{}])[0] != {"event": "progress", "idx": 1, "status": "synth", "seq": 4}:
                message = await ws.receive(timeout=seconds(10))
                if message.type == aiohttp.WSMsgType.TEXT:
                    events.append(message.json())
            closing = asyncio.create_task(listener.close())
            await until(lambda: scheduler.draining, "the drain to begin")
            gate.open()  # the running section finishes in the drain; section 2 never starts
            while (message := await ws.receive(timeout=seconds(10))).type in TEXT_OR_PCM:
                if message.type == aiohttp.WSMsgType.TEXT:
                    events.append(message.json())
            assert (message.type, message.data, message.extra) == (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSCloseCode.GOING_AWAY,
                "the worker is shutting down",
            )
            *_, ok, error, done = events
            assert (ok["event"], ok["idx"], ok["status"]) == ("progress", 1, "ok")
            assert (error["event"], error["idx"]) == ("error", 2)  # never to run here: ended by the drain
            assert error["error"].startswith("QueueFull: the worker is shutting down")
            assert (done["event"], done["ok_count"], done["fail_count"]) == ("done", 2, 1)
            await ws.close()
            message = await idle.receive(timeout=seconds(10))
            assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
        async with asyncio.timeout(seconds(10)):
            await closing
        assert engine.calls == ["가" * 5, "나" * 5]
    finally:
        gate.open()
        if closing is None:
            await listener.close()
