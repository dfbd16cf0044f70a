"""GET /ready: 200 only when a request would be served now; /health stays the status document."""

from __future__ import annotations

import asyncio
import threading

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.protocol import ModelLoadError
from tests.conftest import wait_until_loaded
from tests.timing import seconds
from tests.tone_engine import ToneEngine


class BrokenEngine(ToneEngine):
    def load(self) -> None:
        raise ModelLoadError("no model files in /nowhere")


async def ready(client) -> tuple[int, dict]:
    response = await client.get("/ready")
    return response.status, await response.json()


async def ready_wait(client) -> str | None:
    """The `Retry-After` of `/ready`'s answer (a poller's when to ask again, as a refused request's)."""
    return (await client.get("/ready")).headers.get("Retry-After")


async def test_ready_only_after_the_engine_has_loaded(worker):
    engine = ToneEngine()
    release = threading.Event()
    engine.load = release.wait  # type: ignore[method-assign]  # loading lasts until the test says
    client = await worker(engine, wait_loaded=False)
    status, body = await ready(client)
    assert (status, body["ready"], body["reason"]) == (503, False, "the engine is still loading")
    assert await ready_wait(client) == "1"  # as a request refused with Loading
    release.set()
    await wait_until_loaded(client)
    assert await ready(client) == (200, {"ready": True, "reason": None, "queue": 0})
    assert await ready_wait(client) is None


async def test_not_ready_when_the_engine_failed_to_load(worker):
    client = await worker(BrokenEngine(), wait_loaded=False)
    scheduler = client.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(10)):
        while scheduler.load_error is None:
            await asyncio.sleep(0.01)
    status, body = await ready(client)
    assert status == 503 and "no model files" in body["reason"]
    assert await ready_wait(client) is None  # waiting does not help


async def test_not_ready_while_the_queue_is_full_and_ready_again_after(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=2)
    try:
        batch = {"sections": [{"text": "a."}, {"text": "b."}]}
        assert (await client.post("/synth_batch?async=1", json=batch)).status == 200
        status, body = await ready(client)
        assert status == 503 and body["reason"].startswith("the queue is full (2 sections waiting")
        assert await ready_wait(client) == "5"  # as a request refused with QueueFull
        assert (await client.get("/health")).status == 200  # alive, just busy
    finally:
        engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        while (await ready(client))[0] != 200:
            await asyncio.sleep(0.01)


async def test_not_ready_once_shutdown_began_and_open_without_a_token(worker):
    client = await worker(token="s3cret")
    assert (await ready(client))[0] == 200  # no token needed, like /health
    await client.app[SCHEDULER_KEY].drain(grace=1.0)
    assert await ready(client) == (503, {"ready": False, "reason": "shutting down", "queue": 0})
    assert await ready_wait(client) == "5"  # a request now is a QueueFull: a restarted worker takes it


class DeviceEngine(ToneEngine):
    def load(self) -> None:  # as `providers` refuses a --device that cannot run: CPU would
        raise ModelLoadError("--device qnn: qnn cannot run here: no QNN provider", fallback="cpu")


async def test_health_after_a_failed_load_is_the_fixed_error_body_with_its_fallback(worker):
    """/health's 500 is an error like /synth's: `traceback` and `fallback` as the error body has them
    (it said `error` alone, so a caller reading `fallback` there found no key)."""
    client = await worker(DeviceEngine(), wait_loaded=False)
    scheduler = client.app[SCHEDULER_KEY]
    async with asyncio.timeout(seconds(10)):
        while scheduler.load_error is None:
            await asyncio.sleep(0.01)
    health = await client.get("/health")
    synth = await client.post("/synth", json={"text": "a", "output_path": "/tmp/x.wav"})
    assert health.status == synth.status == 500
    body, error = await health.json(), await synth.json()
    assert body["status"] == "fail" and body["loaded"] is False
    for key in ("error", "traceback", "fallback"):
        assert body[key] == error[key], key
    assert body["fallback"] == "cpu" and body["traceback"] is None


async def test_a_queue_of_one_section_is_worded_in_the_singular(worker):
    """With `--max-queue 1` and one section waiting, the 429 said "1 sections are waiting (bound 1)"
    and /ready "1 sections waiting"."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=1)
    try:
        assert (await client.post("/synth_batch?async=1", json={"sections": [{"text": "a."}]})).status == 200
        status, body = await ready(client)
        assert (status, body["reason"]) == (503, "the queue is full (1 section waiting, bound 1)")
        refused = await client.post("/synth_batch?async=1", json={"sections": [{"text": "b."}]})
        assert refused.status == 429
        assert (await refused.json())["error"] == "QueueFull: 1 section is waiting (bound 1)"
    finally:
        engine.gate.set()
