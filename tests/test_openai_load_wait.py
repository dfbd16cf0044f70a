"""An OpenAI speech request made while the engine loads waits for the load (bounded), so an SDK's call
during a restart takes longer instead of failing: it was a 503 `Loading` at once, which an OpenAI SDK
retries twice (about 3 s) and then raises, while ZipVoice takes seconds to minutes to load."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import aiohttp
import pytest

from npu_worker import open_connections
from npu_worker.app import build_app
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.openai_compat import load_wait
from npu_worker.protocol import ModelLoadError
from npu_worker.server import listen
from tests.openai_support import TEXT, async_sdk, expected_samples
from tests.raw_http import HEALTH_REQUEST, raw_exchange
from tests.test_metrics import scrape, value
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


class GatedFailure(ToneEngine):
    """An engine whose load fails once the test lets it go on."""

    def load(self) -> None:
        assert self.load_gate is not None
        self.load_gate.wait()
        raise ModelLoadError("no model files in /nowhere")


@pytest.fixture
def parked(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set once a request is in the load's wait (its hang-up check, the real one, still runs)."""
    event = asyncio.Event()
    real = load_wait.stop_if_caller_gone

    def spied(request: Any) -> None:
        event.set()
        real(request)

    monkeypatch.setattr(load_wait, "stop_if_caller_gone", spied)
    return event


async def loading_worker(worker: Any, engine: ToneEngine | None = None) -> tuple[Any, threading.Event]:
    engine = engine or ToneEngine()
    engine.load_gate = threading.Event()
    client = await worker(engine, wait_loaded=False)
    return client, engine.load_gate


async def in_the_wait(parked: asyncio.Event, call: asyncio.Task) -> None:
    """Return once `call` waits for the load; fail if it was answered first (it was: 503 at once)."""
    waiting = asyncio.ensure_future(parked.wait())
    async with asyncio.timeout(seconds(10)):
        await asyncio.wait({waiting, call}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if call.done():
        raise AssertionError(f"answered without waiting for the load: {call.result()!r}")


async def test_an_sdk_call_during_the_load_is_answered_once_the_engine_has_loaded(worker, parked):
    client, load_gate = await loading_worker(worker)
    sdk = async_sdk(client)  # (max_retries=0: no retry hides a refusal)
    call = asyncio.ensure_future(
        sdk.audio.speech.create(model="tts-1", voice="alloy", input=TEXT, response_format="pcm")
    )
    await in_the_wait(parked, call)
    load_gate.set()
    async with asyncio.timeout(seconds(30)):
        answer = await call
    assert len(answer.content) == 2 * expected_samples(TEXT)


async def test_a_batch_during_the_load_is_answered_once_the_engine_has_loaded(worker, parked):
    client, load_gate = await loading_worker(worker)
    body = {"items": [{"input": TEXT}, {"input": "둘."}], "response_format": "wav"}
    call = asyncio.ensure_future(client.post("/v1/audio/speech/batch", json=body))
    await in_the_wait(parked, call)
    load_gate.set()
    async with asyncio.timeout(seconds(30)):
        answer = await call
    assert answer.status == 200
    assert (await answer.json())["succeeded"] == 2


async def test_a_caller_that_hangs_up_during_the_wait_ends_it_and_queues_nothing(worker, parked):
    engine = ToneEngine()
    client, load_gate = await loading_worker(worker, engine)
    session = aiohttp.ClientSession()
    call = asyncio.ensure_future(
        session.post(client.make_url("/v1/audio/speech"), json={"input": TEXT, "response_format": "pcm"})
    )
    try:
        await in_the_wait(parked, call)
    finally:
        call.cancel()
        await session.close()  # the connection closes: the caller has gone
    route = {"method": "POST", "route": "/v1/audio/speech", "status": "499"}
    async with asyncio.timeout(seconds(10)):
        while value(await scrape(client), "npu_worker_http_requests_total", **route) != 1:
            await asyncio.sleep(0.05)
    load_gate.set()
    await until(lambda: client.app[SCHEDULER_KEY].loaded, "the load")
    assert engine.calls == []  # nothing was queued for nobody


async def test_a_shutdown_during_the_wait_ends_it_with_the_shutdown_refusal(worker, parked):
    client, load_gate = await loading_worker(worker)
    call = asyncio.ensure_future(client.post("/v1/audio/speech", json={"input": TEXT}))
    try:
        await in_the_wait(parked, call)
        drain = asyncio.ensure_future(client.app[SCHEDULER_KEY].drain(grace=1.0))
        async with asyncio.timeout(seconds(10)):
            answer = await call
    finally:
        load_gate.set()
    assert answer.status == 429 and answer.headers["Retry-After"] == "5"
    error = (await answer.json())["error"]
    assert (error["code"], error["message"]) == (
        "QueueFull",
        "the worker is shutting down; send the request again once it is back",
    )
    await drain


async def test_a_failed_load_ends_the_wait_with_its_error(worker, parked):
    client, load_gate = await loading_worker(worker, GatedFailure())
    call = asyncio.ensure_future(client.post("/v1/audio/speech", json={"input": TEXT}))
    await in_the_wait(parked, call)
    load_gate.set()
    async with asyncio.timeout(seconds(10)):
        answer = await call
    assert answer.status == 500 and (await answer.json())["error"]["code"] == "ModelLoadError"
    assert answer.headers["x-should-retry"] == "false"


@pytest.mark.parametrize("path", ["/v1/audio/speech", "/v1/audio/speech/batch"])
async def test_the_wait_is_bounded_and_then_refused_as_before(worker, monkeypatch, path):
    """Past LOAD_WAIT_SECONDS, `Loading` with `Retry-After: 1`: an SDK's retry waits again."""
    monkeypatch.setattr(load_wait, "LOAD_WAIT_SECONDS", 0.2)
    client, load_gate = await loading_worker(worker)
    body = {"items": [{"input": TEXT}]} if path.endswith("batch") else {"input": TEXT}
    try:
        answer = await client.post(path, json=body)
    finally:
        load_gate.set()
    assert answer.status == 503 and answer.headers["Retry-After"] == "1"
    assert (await answer.json())["error"]["code"] == "Loading"


async def test_past_a_quarter_of_the_connections_a_request_is_refused_at_once(worker, parked):
    """A waiting request is no connection the guard may close for room: a flood during the load waits
    on at most a quarter of --max-connections (here 1), the others refused as before."""
    engine = ToneEngine()
    engine.load_gate = threading.Event()
    client = await worker(engine, wait_loaded=False, max_connections=4)
    body = {"input": TEXT, "response_format": "pcm"}
    first = asyncio.ensure_future(client.post("/v1/audio/speech", json=body))
    try:
        await in_the_wait(parked, first)
        async with asyncio.timeout(seconds(10)):
            second = await client.post("/v1/audio/speech", json=body)
        assert second.status == 503 and second.headers["Retry-After"] == "1"
        assert (await second.json())["error"]["code"] == "Loading"
    finally:
        engine.load_gate.set()
    async with asyncio.timeout(seconds(30)):
        answer = await first
    assert answer.status == 200 and len(await answer.read()) == 2 * expected_samples(TEXT)


async def test_a_waiting_request_with_a_large_body_is_not_closed_for_room(settings, parked, monkeypatch):
    """The worker, not the caller, leaves a waiting request's body unread: past aiohttp's read-ahead it
    never came whole, and at the cap the guard closed it as a slow body (its caller: a closed connection,
    no answer). It is in use while it waits; the new connection is the one refused."""
    monkeypatch.setattr(open_connections, "SLOW_BODY_SECONDS", 0.0)
    engine = ToneEngine()
    engine.load_gate = threading.Event()
    configured = settings.replace(max_connections=1)
    app = await asyncio.to_thread(build_app, configured, engine)
    listener = await listen(app, configured, host="127.0.0.1", port=0)
    body = json.dumps({"input": TEXT, "response_format": "pcm", "instructions": "x" * (4 << 20)}).encode()
    head = b"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(head + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        async with asyncio.timeout(seconds(10)):
            await parked.wait()
        await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))  # over the cap
        engine.load_gate.set()
        async with asyncio.timeout(seconds(30)):
            answer = await reader.read()
        writer.close()
        assert answer.startswith(b"HTTP/1.1 "), answer[:200]
        assert listener.guard.slow_bodies == 0
    finally:
        engine.load_gate.set()
        await listener.close()
