"""The WebSocket routes when the worker shuts down: after the drain, every socket is told and closed with
1001 (`/ws`, and the OpenAI speech stream)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import websockets

from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY, WS_SESSIONS_KEY
from npu_worker.server import Listener, listen
from npu_worker.ws_server.opening import OpenSockets
from tests.test_ws_support import ChunkGate, batch
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

TEXT_OR_PCM = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)


@dataclass
class Stopping:
    """A served worker whose engine makes a chunk only when the gate allows; `shut_down()` starts what
    SIGTERM starts, and lets the running section finish."""

    engine: ToneEngine
    gate: ChunkGate
    listener: Listener
    closing: asyncio.Task[None] | None = None

    async def shut_down(self) -> None:
        scheduler = self.listener.runner.app[SCHEDULER_KEY]
        self.closing = asyncio.create_task(self.listener.close())
        await until(lambda: scheduler.draining, "the drain to begin")
        self.gate.open()  # the running section finishes in the drain; the queued ones never start

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.listener.port}{path}"


@contextlib.asynccontextmanager
async def gated_worker(settings: Any) -> AsyncIterator[Stopping]:
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate  # type: ignore[assignment]
    app = await asyncio.to_thread(build_app, settings, engine)
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    worker = Stopping(engine, gate, listener)
    try:
        await until(lambda: app[SCHEDULER_KEY].loaded, "the engine to load")
        yield worker
        assert worker.closing is not None, "the test shuts the worker down"
        async with asyncio.timeout(seconds(10)):
            await worker.closing
    finally:
        gate.open()
        if worker.closing is None:
            await listener.close()


async def until_closed(
    ws: aiohttp.ClientWebSocketResponse, events: list[dict[str, Any]], fifth_said: asyncio.Event | None = None
) -> None:
    """Reads to the close, keeping the text messages; the close must be the shutdown's 1001.
    `fifth_said`: set once an event of sentence 4 has come."""
    while (message := await ws.receive(timeout=seconds(10))).type in TEXT_OR_PCM:
        if message.type == aiohttp.WSMsgType.TEXT:
            events.append(message.json())
            if fifth_said is not None and events[-1].get("sentence_index") == 4:
                fifth_said.set()
    assert (message.type, message.data, message.extra) == (
        aiohttp.WSMsgType.CLOSE,
        aiohttp.WSCloseCode.GOING_AWAY,
        "the worker is shutting down; send the request again once it is back",  # the 429's words
    )


async def test_a_shutdown_ends_the_running_request_and_closes_every_socket_with_1001(settings, caplog):
    """They were left silent until aiohttp's shutdown timeout cut them (1006): a request got neither
    its `done` nor a word of why, and an idle socket could not tell a shutdown from a network fault."""
    caplog.set_level(logging.INFO, logger="npu_worker")
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        idle = await http.ws_connect(worker.url("/ws"))
        ws = await http.ws_connect(worker.url("/ws"), autoclose=False)
        await ws.send_json(batch("가" * 5, "나" * 5, "다" * 5))  # one 0.1 s chunk each
        worker.gate.allow(1)  # section 0 is made; section 1 waits in the engine
        events: list[dict[str, Any]] = []
        while (events[-1:] or [{}])[0] != {"event": "progress", "idx": 1, "status": "synth", "seq": 4}:
            message = await ws.receive(timeout=seconds(10))
            if message.type == aiohttp.WSMsgType.TEXT:
                events.append(message.json())
        await worker.shut_down()
        await until_closed(ws, events)
        *_, ok, error, done = events
        assert (ok["event"], ok["idx"], ok["status"]) == ("progress", 1, "ok")
        assert (error["event"], error["idx"]) == ("error", 2)  # never to run here: ended by the drain
        assert error["error"].startswith("QueueFull: the worker is shutting down")
        assert (done["event"], done["ok_count"], done["fail_count"]) == ("done", 2, 1)
        await ws.close()
        message = await idle.receive(timeout=seconds(10))
        assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
    assert worker.engine.calls == ["가" * 5, "나" * 5]
    # (the drain ended the batch, a preview, with its `error`: nothing was still running at the close)
    said = "shutdown: closed 2 WebSocket sockets (1001); none had a request running"
    assert said in caplog.messages, [m for m in caplog.messages if "shutdown" in m]


async def test_the_shutdowns_line_says_no_request_was_running_on_idle_sockets(settings, caplog):
    """It said "closed 2 WebSocket sockets (1001; a request still running was ended)" with none running."""
    caplog.set_level(logging.INFO, logger="npu_worker")
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        sockets = [await http.ws_connect(worker.url(path)) for path in ("/ws", "/v1/audio/speech/stream")]
        await worker.shut_down()
        for ws in sockets:
            message = await ws.receive(timeout=seconds(10))
            assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
    closes = [m for m in caplog.messages if "WebSocket sockets" in m]
    assert closes == ["shutdown: closed 2 WebSocket sockets (1001); none had a request running"], closes


async def test_a_shutdown_stops_a_speech_streams_utterance_with_an_error_and_closes_it_with_1001(
    settings, caplog
):
    """The same silence on `WS /v1/audio/speech/stream`: a caller whose utterance would never be finished
    here got no word of it. (The sentences still queued are ended by the drain, each with its own
    `QueueFull` error.)"""
    caplog.set_level(logging.INFO, logger="npu_worker")
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        url = worker.url("/v1/audio/speech/stream")
        idle = await http.ws_connect(url)
        ws = await http.ws_connect(url, autoclose=False)
        await ws.send_json({"type": "session.config", "voice": "default", "model": "tts-1"})
        await ws.send_json({"type": "input.text", "text": "첫 번째 문장입니다. 두 번째 문장도 있습니다! 끝"})
        await until(lambda: worker.engine.calls, "the engine to take sentence 0")  # "끝" waits for more
        await worker.shut_down()
        events: list[dict[str, Any]] = []
        await until_closed(ws, events)
        refused = [e for e in events if e["type"] == "error" and "sentence_index" in e]
        assert [(e["sentence_index"], e["code"]) for e in refused] == [(1, "QueueFull")]
        error = events[-1]  # the utterance, still open, ends too
        assert (error["type"], error["code"], "sentence_index" in error) == ("error", "QueueFull", False)
        # (it said `...; send the text again once it is back`: the one wording now)
        assert error["message"] == "the worker is shutting down; send the request again once it is back"
        await ws.close()
        message = await idle.receive(timeout=seconds(10))
        assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
    assert worker.engine.calls == ["첫 번째 문장입니다."]
    said = "shutdown: closed 2 WebSocket sockets (1001); 1 had a request still running, ended with QueueFull"
    assert said in caplog.messages, [m for m in caplog.messages if "shutdown" in m]


async def five_sentences_at_shutdown(settings: Any) -> dict[int, list[dict[str, Any]]]:
    """The events of each of 5 sentences sent at once, the worker shut down while it makes the first.
    The fifth waits for one of the 4 places, which the pump gives back only once sentence 0 has played:
    then the drain has ended too, and the sockets' close raced the fifth's refusal (a loaded box lost it
    in 5 tries of 5). The close (`close_all`, after the drain) is held until the fifth's `error` has come,
    or 10 s (scaled): the order is the product's own, only the close waits for it."""
    async with gated_worker(settings) as worker, aiohttp.ClientSession() as http:
        app = worker.listener.runner.app
        fifth_said = asyncio.Event()
        hold_the_close_for(app[WS_SESSIONS_KEY], fifth_said)
        ws = await http.ws_connect(worker.url("/v1/audio/speech/stream"), autoclose=False)
        await ws.send_json({"type": "session.config", "voice": "default", "model": "tts-1"})
        text = " ".join(f"{n} 번째 문장입니다." for n in ("첫", "두", "세", "네", "다섯")) + " "
        await ws.send_json({"type": "input.text", "text": text})
        await until(lambda: worker.engine.calls, "the engine to take sentence 0")
        # (sentences 1-3 are submitted one after another: the engine can take sentence 0 before the
        # last of them is queued, and one submitted once the drain began is refused alone, by the docs)
        scheduler = app[SCHEDULER_KEY]
        await until(
            lambda: scheduler.queue_size() == 4, "sentences 0 to 3 to be admitted"
        )  # (0 counts till it ends)
        events: list[dict[str, Any]] = []
        reading = asyncio.create_task(until_closed(ws, events, fifth_said))
        await worker.shut_down()
        await reading
        await ws.close()
    assert worker.engine.calls == ["첫 번째 문장입니다."]
    return {i: [e for e in events if e.get("sentence_index") == i] for i in range(5)}


def hold_the_close_for(sessions: OpenSockets, said: asyncio.Event) -> None:
    """The shutdown's close of the sockets waits for `said` (10 s at most, then closes as before)."""
    close_all = sessions.close_all

    async def held() -> tuple[int, int]:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds(10)):
                await said.wait()
        return await close_all()

    sessions.close_all = held  # type: ignore[method-assign]


async def test_a_speech_stream_sentence_sent_during_the_drain_is_refused_in_the_drains_words(settings):
    """A sentence refused as it was submitted (the drain begun: the fifth, waiting for one of the 4 places)
    said `the worker is shutting down`, where the queued ones the drain ended said `...; send the
    request again`: two wordings for one refusal. Now the same words; it never ran and gets its
    `error` alone, where a queued one, already announced, gets `audio.start`, `error`, `audio.done`."""
    said = await five_sentences_at_shutdown(settings)
    kinds = {i: [e["type"] for e in events] for i, events in said.items()}
    assert kinds[0] == ["audio.start", "first_audio", "audio.done"], kinds
    assert kinds[1] == kinds[2] == kinds[3] == ["audio.start", "error", "audio.done"], kinds
    assert kinds[4] == ["error"], kinds
    words = {e["message"] for events in said.values() for e in events if e["type"] == "error"}
    assert words == {"the worker is shutting down; send the request again once it is back"}, words


async def test_a_peer_that_reads_nothing_does_not_stop_the_shutdown_from_closing_the_others(settings):
    """aiohttp's drain waiter is one per connection and was not shielded: the shutdown stopping a pump
    that waited on a peer reading nothing cancelled it, the goodbye's next send on that socket raised
    CancelledError at once, and it escaped the shutdown's bounded steps."""
    engine = ToneEngine(chunk_seconds=1.0, delay_per_chunk=0.005)
    app = await asyncio.to_thread(build_app, settings, engine)
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    loop = asyncio.get_running_loop()
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.setblocking(False)
    closing = None
    reader = None
    try:
        await until(lambda: app[SCHEDULER_KEY].loaded, "the engine to load")
        async with aiohttp.ClientSession() as http:
            idle = await http.ws_connect(f"http://127.0.0.1:{listener.port}/ws")
            await loop.sock_connect(stuck, ("127.0.0.1", listener.port))
            reader = await websockets.connect(
                f"ws://127.0.0.1:{listener.port}/ws", sock=stuck, max_queue=1, ping_interval=None
            )
            await reader.send(json.dumps(batch(*["가" * 2000] * 10)))
            # (aiohttp's flow control: the transport's buffer is full, the pump waits on the peer)
            await until(lambda: any(h._paused for h in listener.guard.open), "the pump to wait on the peer")
            closing = asyncio.create_task(listener.close())
            message = await idle.receive(timeout=seconds(10))
            assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, aiohttp.WSCloseCode.GOING_AWAY)
            async with asyncio.timeout(seconds(10)):
                await closing  # (CancelledError before)
    finally:
        if reader is not None:  # the socket closed under its transport left that open: a later GC warned
            reader.transport.abort()
        stuck.close()
        if closing is None:
            await listener.close()
