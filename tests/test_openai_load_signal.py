"""The waits for the engine's load wake on its end (`Scheduler.load_signal`), not a 50 ms poll; the stream
socket's messages and the voice routes wait as a speech request does: bounded, among a quarter of
`--max-connections`, ended by the shutdown's QueueFull (the socket's waited out its 30 s, uncounted;
an upload or delete during the load did not wait at all)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.errors import SHUTTING_DOWN_REASON
from npu_worker.openai_compat import core
from npu_worker.protocol import UnknownLanguage
from tests import test_openai_load_wait
from tests.openai_support import TEXT, expected_samples, tone_wav
from tests.test_openai_load_wait import in_the_wait, loading_worker
from tests.test_openai_stream_ws import receive, stream_url
from tests.test_openai_voices import upload_form
from tests.timing import seconds
from tests.tone_engine import ToneEngine

parked = test_openai_load_wait.parked  # (the fixture: set once a request is in the load's wait)

# A span in which a 50 ms poll looks at the load about 20 times, and a woken wait once.
HELD_LOAD_SECONDS = 1.0


async def test_a_waiting_request_looks_at_the_load_when_it_ends_not_every_50_ms(worker, parked, monkeypatch):
    monkeypatch.setattr(core, "LOAD_RECHECK_SECONDS", 60.0, raising=False)  # (no look but the load's end's)
    client, load_gate = await loading_worker(worker)
    scheduler = client.app[SCHEDULER_KEY]
    looks = 0
    drain_state = type(scheduler).draining

    def counted(self):  # noqa: ANN001, ANN202 - a property's getter
        nonlocal looks
        looks += 1
        return drain_state.fget(self)

    monkeypatch.setattr(type(scheduler), "draining", property(counted))  # each look at the shutdown
    call = asyncio.ensure_future(
        client.post("/v1/audio/speech", json={"input": TEXT, "response_format": "pcm"})
    )
    try:
        await in_the_wait(parked, call)
        looks_before = looks
        await asyncio.sleep(HELD_LOAD_SECONDS)  # (the span measured: no event to await in it)
        looks_while_loading = looks - looks_before
    finally:
        load_gate.set()
    async with asyncio.timeout(seconds(30)):
        answer = await call
    assert answer.status == 200 and len(await answer.read()) == 2 * expected_samples(TEXT)
    assert looks_while_loading <= 2, looks_while_loading


async def test_a_stream_socket_waiting_for_the_load_is_ended_by_the_shutdown(worker):
    client, load_gate = await loading_worker(worker)
    try:
        async with websockets.connect(stream_url(client)) as ws:
            await ws.send(json.dumps({"type": "session.config"}))
            drain = asyncio.ensure_future(client.app[SCHEDULER_KEY].drain(grace=0.2))
            async with asyncio.timeout(seconds(10)):  # (it waited out its 30 s)
                told = await receive(ws)
            assert isinstance(told, dict) and told["type"] == "error", told
            assert (told["code"], told["message"]) == ("QueueFull", SHUTTING_DOWN_REASON)
            await drain
    finally:
        load_gate.set()


async def test_a_stream_socket_waits_among_a_quarter_of_the_connections(worker, parked):
    """One waiter at most here (4 connections): a socket's message past it is told Loading at once."""
    engine = ToneEngine()
    engine.load_gate = threading.Event()
    client = await worker(engine, wait_loaded=False, max_connections=4)
    first = asyncio.ensure_future(client.post("/v1/audio/speech", json={"input": TEXT}))
    try:
        await in_the_wait(parked, first)
        async with websockets.connect(stream_url(client)) as ws:
            await ws.send(json.dumps({"type": "session.config"}))
            async with asyncio.timeout(seconds(10)):  # (it waited, uncounted, for the load)
                told = await receive(ws)
            assert isinstance(told, dict) and (told["type"], told["code"]) == ("error", "Loading"), told
    finally:
        engine.load_gate.set()
    async with asyncio.timeout(seconds(30)):
        assert (await first).status == 200


async def test_a_voice_upload_during_the_load_waits_for_it_then_is_stored(worker, parked):
    client, load_gate = await loading_worker(worker)
    call = asyncio.ensure_future(client.post("/v1/audio/voices", data=upload_form("teacher", tone_wav())))
    try:
        await in_the_wait(parked, call)  # (it was answered at once, the engine's voices unchecked)
    finally:
        load_gate.set()
    async with asyncio.timeout(seconds(30)):
        answer = await call
    assert answer.status == 201, await answer.text()


class LanguageVoices(ToneEngine):
    """An engine whose own voices are language codes, as espeak's: an upload may not take their names."""

    def voice_for(self, lang: str) -> str:
        raise UnknownLanguage(f"no voice for {lang!r}")


@pytest.mark.parametrize(("engine_class", "status"), [(ToneEngine, 201), (LanguageVoices, 503)])
async def test_an_upload_with_no_room_to_wait_is_refused_only_where_the_engine_has_voices(
    worker, parked, engine_class, status
):
    """Past the wait (here: no room among the one waiter of 4 connections) an upload to an engine with
    no voices of its own (ZipVoice) is stored, as it was before the wait came; it was the 503 Loading.
    One to an engine whose voices are names (espeak) waits for them: Loading."""
    engine = engine_class()
    engine.load_gate = threading.Event()
    client = await worker(engine, wait_loaded=False, max_connections=4)
    first = asyncio.ensure_future(client.post("/v1/audio/speech", json={"input": TEXT}))
    try:
        await in_the_wait(parked, first)
        async with asyncio.timeout(seconds(10)):
            answer = await client.post("/v1/audio/voices", data=upload_form("teacher", tone_wav()))
            assert answer.status == status, await answer.text()
        if status == 503:
            assert (await answer.json())["error"]["code"] == "Loading"
    finally:
        engine.load_gate.set()
    async with asyncio.timeout(seconds(30)):
        assert (await first).status == 200


@pytest.mark.parametrize("method", ["POST", "DELETE"])
async def test_a_voice_change_waiting_for_the_load_is_ended_by_the_shutdown(worker, parked, method):
    client, load_gate = await loading_worker(worker)
    if method == "POST":
        call = asyncio.ensure_future(client.post("/v1/audio/voices", data=upload_form("teacher", tone_wav())))
    else:
        call = asyncio.ensure_future(client.delete("/v1/audio/voices/teacher"))
    try:
        await in_the_wait(parked, call)
        drain = asyncio.ensure_future(client.app[SCHEDULER_KEY].drain(grace=0.2))
        async with asyncio.timeout(seconds(10)):
            answer = await call
        await drain
    finally:
        load_gate.set()
    assert answer.status == 429 and answer.headers["Retry-After"] == "5"
    assert (await answer.json())["error"]["code"] == "QueueFull"
