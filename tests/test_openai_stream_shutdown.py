"""WS /v1/audio/speech/stream at shutdown: told and closed with 1001, as `/ws` (tests/test_ws_shutdown.py)."""

from __future__ import annotations

import asyncio

import aiohttp

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.server import listen
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

CONFIG = {"type": "session.config", "voice": "default", "model": "tts-1"}
THREE_SENTENCES = "첫 번째 문장입니다. 두 번째 문장도 있습니다! 끝"


async def test_a_shutdown_stops_the_utterance_with_an_error_and_closes_every_socket_with_1001(settings):
    """They were left silent until aiohttp's shutdown timeout cut them (1006, 4 s later): a caller
    whose utterance would never be finished here got no word of it, and an idle one could not tell a
    shutdown from a network fault. (The sentences still queued are ended by the drain, each with its
    own `QueueFull` error.)"""
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate  # type: ignore[assignment]
    app = await asyncio.to_thread(build_app, settings, engine)
    scheduler = app[SCHEDULER_KEY]
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    closing: asyncio.Task[None] | None = None
    try:
        await until(lambda: scheduler.loaded, "the engine to load")
        url = f"http://127.0.0.1:{listener.port}/v1/audio/speech/stream"
        async with aiohttp.ClientSession() as http:
            idle = await http.ws_connect(url)
            ws = await http.ws_connect(url, autoclose=False)
            await ws.send_json(CONFIG)
            await ws.send_json({"type": "input.text", "text": THREE_SENTENCES})  # the utterance stays open
            events = []
            while not any(e.get("type") == "audio.start" for e in events):  # sentence 0 is being made
                message = await ws.receive(timeout=seconds(10))
                if message.type == aiohttp.WSMsgType.TEXT:
                    events.append(message.json())
            await until(lambda: engine.calls, "the engine to take sentence 0")
            closing = asyncio.create_task(listener.close())
            await until(lambda: scheduler.draining, "the drain to begin")
            gate.open()  # the running sentence finishes in the drain; the others never start
            while (message := await ws.receive(timeout=seconds(10))).type in (
                aiohttp.WSMsgType.TEXT,
                aiohttp.WSMsgType.BINARY,
            ):
                if message.type == aiohttp.WSMsgType.TEXT:
                    events.append(message.json())
            assert (message.type, message.data, message.extra) == (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSCloseCode.GOING_AWAY,
                "the worker is shutting down",
            )
            refused = [e for e in events if e["type"] == "error" and "sentence_index" in e]
            assert [(e["sentence_index"], e["code"]) for e in refused] == [(1, "QueueFull")]  # "끝" waits
            error = events[-1]  # the utterance, still open, ends too
            assert (error["type"], error["code"], "sentence_index" in error) == ("error", "QueueFull", False)
            assert error["message"].startswith("the worker is shutting down; send the text again")
            await ws.close()
            message = await idle.receive(timeout=seconds(10))
            assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
        async with asyncio.timeout(seconds(10)):
            await closing
        assert engine.calls == ["첫 번째 문장입니다."]
    finally:
        gate.open()
        if closing is None:
            await listener.close()
