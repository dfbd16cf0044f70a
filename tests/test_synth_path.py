"""What one `/synth` costs the event loop: its events' hand-offs and its tasks (real worker, real
socket; benchmarks/SERVER_OVERHEAD.md, 2026-12-05 late night, counts them with `loop_cost.py --route
synth`)."""

from __future__ import annotations

import asyncio
import json
import threading

from npu_worker.app_keys import NDJSON_STREAMS_KEY, SCHEDULER_KEY
from npu_worker.errors import SHUTTING_DOWN_REASON
from npu_worker.jobs.model import LogEntry
from tests.test_http_bad_input import assert_error_body
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def test_a_synths_events_reach_the_loop_in_one_drain_with_its_done(worker, tmp_path):
    """A `/synth` answers at its job's `done`; its `start` (from the executor), `synth` and `ok` (from
    the engine thread) each woke the loop on their own before it, to be read by nobody."""
    client = await worker()
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    drains: list[list[str]] = []  # per drain: the events it published
    drain = handoff._drain

    def counted() -> None:
        with handoff._lock:
            pending = [arg.event for _, arg in handoff._pending if isinstance(arg, LogEntry)]
        drains.append([type(event).__name__ for event in pending])
        drain()

    handoff._drain = counted
    body = {"text": "한 번에.", "output_path": str(tmp_path / "one.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    assert [names for names in drains if names] == [["Start", "Progress", "Progress", "Done"]]


async def test_a_synth_waits_in_its_own_task_alone(worker, tmp_path):
    """The handler waited on two tasks more, one reading the job's events and one polling every 0.2 s
    whether the caller had gone (two task starts, their wake-ups and their cancels a call). It still
    notices a caller gone within that time (test_server_limits.py): in its own task."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section is held at its first chunk
    client = await worker(engine)
    body = {"text": "기다리는 동안.", "output_path": str(tmp_path / "one.wav")}
    answer = asyncio.create_task(client.post("/synth", json=body))
    try:
        await until(lambda: engine.calls, "the section to start")
        await asyncio.sleep(0.3)  # more than one look at the caller
        names = {getattr(task.get_coro(), "__qualname__", "") for task in asyncio.all_tasks()}
        assert not names & {"_wait_done", "until_caller_gone"}, names
    finally:
        engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        assert (await (await answer).json())["status"] == "ok"


async def test_a_synth_wakes_the_loop_from_another_thread_once_for_its_done(worker, tmp_path):
    """Its admission runs off the loop (it names a file); the executor's future then woke the loop once
    a call to go on to wait for the `done` (a wake-up, a turn): its success now rides with the job's
    events, whose one drain is the only wake-up of the loop from another thread a call."""
    client = await worker()
    loop = asyncio.get_running_loop()
    woken: list[str] = []
    threadsafe = loop.call_soon_threadsafe

    def counted(callback, *arguments, **keywords):  # type: ignore[no-untyped-def]
        woken.append(getattr(callback, "__qualname__", type(callback).__qualname__))
        return threadsafe(callback, *arguments, **keywords)

    body = {"text": "한 번에.", "output_path": str(tmp_path / "warm.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
    try:
        for call in range(3):
            body = {"text": f"한 번에 {call}.", "output_path": str(tmp_path / f"{call}.wav")}
            answer = await (await client.post("/synth", json=body)).json()
            assert answer["status"] == "ok" and (tmp_path / f"{call}.wav").stat().st_size > 44
    finally:
        del loop.call_soon_threadsafe
    assert woken == ["LoopHandoff._drain"] * 3


async def test_a_synth_refused_off_the_loop_answers_its_refusal(worker, tmp_path, settings):
    """Refused by its admission off the loop (a target in the state dir; the queue full), its caller
    is told as before: the refusal wakes the loop, ends the handler's wait and is raised there."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the first call holds the engine and the queue's one place
    client = await worker(engine, max_queue=1)
    target = f"{settings.state_dir}/x.wav"
    async with asyncio.timeout(seconds(10)):
        response = await client.post("/synth", json={"text": "hi", "output_path": target})
    assert response.status == 400
    assert_error_body(await response.json(), "OutputPathNotAllowed")

    def call(name: str) -> asyncio.Task:
        body = {"text": f"{name}.", "output_path": str(tmp_path / f"{name}.wav")}
        return asyncio.create_task(client.post("/synth", json=body))

    running = call("running")
    try:
        await until(lambda: engine.calls, "the first call to start")
        async with asyncio.timeout(seconds(10)):
            response = await call("refused")
        assert response.status == 429
        assert_error_body(await response.json(), "QueueFull")
    finally:
        engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        assert (await (await running).json())["status"] == "ok"


async def test_a_synth_still_being_admitted_when_the_worker_stops_is_refused_as_during_the_shutdown(
    worker, tmp_path
):
    """Its admission not awaited, its handler already waits for the job's `done` while the admission
    runs: a shutdown that ends the waits then finds a job with no section yet (an `IndexError`, a 500;
    then a 200 `Cancelled`, which its caller never asked for and no client sends again). It is the
    shutdown's refusal, as when the admission was awaited: a 429 `QueueFull` with its `Retry-After`
    (the Python client waits and sends it again), and the late admission refused."""
    from npu_worker.http_compat.ndjson import end_streams

    client = await worker()
    scheduler = client.app[SCHEDULER_KEY]
    admitting, held = threading.Event(), threading.Event()
    sections = scheduler.checks.sections

    def held_sections(*arguments):  # type: ignore[no-untyped-def]
        admitting.set()
        held.wait(seconds(10))  # the real resolution, once the shutdown has ended the waits
        return sections(*arguments)

    scheduler.checks.sections = held_sections
    body = {"text": "늦게.", "output_path": str(tmp_path / "late.wav")}
    answer = asyncio.ensure_future(client.post("/synth", json=body))
    try:
        await until(admitting.is_set, "the admission to start")
        await until(lambda: client.app[NDJSON_STREAMS_KEY], "the handler to wait")
        await scheduler.drain(grace=seconds(10))
        assert end_streams(client.app) == (0, 1)  # as the shutdown does after the drain
        async with asyncio.timeout(seconds(10)):
            response = await answer
    finally:
        held.set()
    assert response.status == 429 and response.headers["Retry-After"]
    body = await response.json()
    assert_error_body(body, "QueueFull")
    assert body["error"] == f"QueueFull: {SHUTTING_DOWN_REASON}"
    assert not (tmp_path / "late.wav").exists()


async def test_a_synth_whose_caller_hangs_up_during_its_admission_is_cancelled_once_admitted(
    served, tmp_path
):
    """Its admission not awaited, the handler looks at its caller while the admission still runs: a
    hang-up seen then found no live job to cancel, was not looked for again, and the synthesis (20 s
    here) ran for nobody. The cancel is tried again at the next look, and finds the job once queued."""
    engine = ToneEngine(delay_per_chunk=0.05)  # 2 000 characters: 400 chunks, 20 s
    listener = await served(engine=engine)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    admitting, held = threading.Event(), threading.Event()
    sections, cancel = scheduler.checks.sections, scheduler.cancel
    cancels: list[bool] = []  # what each of the handler's cancels found

    def held_sections(*arguments):  # type: ignore[no-untyped-def]
        admitting.set()
        held.wait(seconds(10))  # until the handler has seen its caller gone
        return sections(*arguments)

    def counted(job_id: str) -> bool:
        cancels.append(cancel(job_id))
        return cancels[-1]

    scheduler.checks.sections, scheduler.cancel = held_sections, counted
    body = json.dumps({"text": "가" * 2000, "output_path": str(tmp_path / "never.wav")}).encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    try:
        await until(admitting.is_set, "the admission to start")
        writer.close()
        await until(lambda: cancels, "the handler to see its caller gone")
    finally:
        held.set()
    await until(lambda: cancels[-1], "the cancel to find the job once admitted")
    async with asyncio.timeout(seconds(5)):
        while scheduler.jobs_running() or scheduler.queue_size():
            await asyncio.sleep(0.05)
    assert cancels[0] is False and not (tmp_path / "never.wav").exists()
