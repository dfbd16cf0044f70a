"""A WebSocket's messages during the shutdown's drain: aiohttp's `pre_shutdown` closed every connection
before the drain, and a closed connection drops every byte that arrives, so the OpenAI speech stream (and
`/ws`) answered no client message from the SIGTERM to the 1001, however long the running section took.
A WebSocket now reads on until its 1001: each message is answered (a refusal once the queue is shut)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_shutdown import gated_worker
from tests.timing import seconds, until

SHUTTING_DOWN = "the worker is shutting down; send the request again once it is back"


async def text_answer(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    """The next text message that is not one of the running sentence's (its audio goes on meanwhile)."""
    while True:
        message = await ws.receive(timeout=seconds(10))
        assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message
        if message.type == aiohttp.WSMsgType.TEXT and "sentence_index" not in message.json():
            return message.json()


async def test_a_speech_stream_answers_its_messages_while_the_running_sentence_drains(settings):
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        ws = await http.ws_connect(worker.url("/v1/audio/speech/stream"), autoclose=False)
        config = {"type": "session.config", "voice": "default", "model": "tts-1"}
        await ws.send_json(config)
        assert (await text_answer(ws))["type"] == "session.configured"
        await ws.send_json({"type": "input.text", "text": "첫 번째 문장입니다. "})
        await until(lambda: worker.engine.calls, "the engine to take sentence 0")
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        worker.closing = asyncio.create_task(worker.listener.close())  # SIGTERM's: the drain begins
        await until(lambda: scheduler.draining, "the drain to begin")
        await ws.send_json(config)  # the running sentence is held at the gate: the drain goes on
        assert (await text_answer(ws))["type"] == "session.configured"
        await ws.send_json({"type": "bogus"})
        said = await text_answer(ws)
        assert (said["type"], said["code"]) == ("error", "UnknownMessage"), said
        worker.gate.open()
        while (message := await ws.receive(timeout=seconds(10))).type != aiohttp.WSMsgType.CLOSE:
            pass  # the sentence's audio, its `audio.done`, the utterance's `error`
        assert (message.data, message.extra) == (aiohttp.WSCloseCode.GOING_AWAY, SHUTTING_DOWN)
        await ws.close()


async def test_a_ws_request_sent_during_the_drain_is_refused_in_words(settings):
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        busy = await http.ws_connect(worker.url("/ws"), autoclose=False)
        await busy.send_json({"type": "synth", "text": "가" * 5})
        await until(lambda: worker.engine.calls, "the engine to take the section")
        ws = await http.ws_connect(worker.url("/ws"), autoclose=False)
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        worker.closing = asyncio.create_task(worker.listener.close())
        await until(lambda: scheduler.draining, "the drain to begin")
        await ws.send_json({"type": "synth", "text": "나" * 5})
        message = await ws.receive(timeout=seconds(10))
        assert message.type == aiohttp.WSMsgType.TEXT, message
        assert message.json()["error"] == f"QueueFull: {SHUTTING_DOWN}", message.json()
        worker.gate.open()
        for socket in (ws, busy):
            while (await socket.receive(timeout=seconds(10))).type != aiohttp.WSMsgType.CLOSE:
                pass
            await socket.close()
    assert worker.engine.calls == ["가" * 5]


async def test_a_sentence_sent_during_the_drain_is_refused_and_never_spoken(settings):
    """A second speech stream, open before the SIGTERM, sends a whole sentence once the drain began:
    it must be told QueueFull, and the engine must never take it (the drain is for work already in)."""
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        config = {"type": "session.config", "voice": "default", "model": "tts-1"}
        busy = await http.ws_connect(worker.url("/v1/audio/speech/stream"), autoclose=False)
        late = await http.ws_connect(worker.url("/v1/audio/speech/stream"), autoclose=False)
        for ws in (busy, late):
            await ws.send_json(config)
            assert (await text_answer(ws))["type"] == "session.configured"
        await busy.send_json({"type": "input.text", "text": "첫 번째 문장입니다. "})
        await until(lambda: worker.engine.calls, "the engine to take sentence 0")
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        worker.closing = asyncio.create_task(worker.listener.close())
        await until(lambda: scheduler.draining, "the drain to begin")
        await late.send_json({"type": "input.text", "text": "두 번째 문장입니다. "})
        await late.send_json({"type": "input.done"})
        said = []  # (the sentence's refusal carries its sentence_index: read every text message)
        while not said or said[-1]["type"] != "session.done":
            said.append(await late.receive_json(timeout=seconds(10)))
        assert [(m["type"], m.get("code"), m.get("message")) for m in said] == [
            ("error", "QueueFull", SHUTTING_DOWN),
            ("session.done", None, None),
        ], said
        worker.gate.open()
        for ws in (busy, late):
            while (await ws.receive(timeout=seconds(10))).type != aiohttp.WSMsgType.CLOSE:
                pass
            await ws.close()
    assert worker.engine.calls == ["첫 번째 문장입니다."], worker.engine.calls
