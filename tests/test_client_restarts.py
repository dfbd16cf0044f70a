"""The pipeline client against a worker that restarts mid-batch, on real sockets: killed and started
again, restarted while it reads its kept jobs (`Loading`), behind a Redis restart, or restarted with an
engine that failed to load; the batch is followed to its end, or given up in words, never waited on
for ever."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from npu_worker import client
from npu_worker.client import aio
from npu_worker.protocol import ModelLoadError
from tests.cluster_support import node_starter
from tests.rogue_worker import RogueWorker, ndjson, relay_to, reply
from tests.test_client import Recorder
from tests.test_job_retention import write_job
from tests.test_start_up_recovery import serve_holding_the_reading
from tests.timing import seconds
from tests.tone_engine import ToneEngine
from tests.worker_process import start_worker_process


@pytest.mark.allow_blocking
def test_the_stream_survives_a_kill_9_and_restart_of_the_worker(tmp_path):
    state, out = tmp_path / "state", tmp_path / "out"
    processes = [start_worker_process(state, 0, delay=0.02, timeout=seconds(30), output_root=tmp_path)]
    port = processes[0].port
    sections = [
        {"idx": i, "text": f"섹션 {i} " + "가" * 20, "output_path": str(out / f"s{i}.wav")} for i in range(8)
    ]
    two_done = threading.Event()
    recorder = Recorder()
    outcome: dict[str, Any] = {}

    def on_progress(idx: int, event: dict[str, Any]) -> None:
        recorder(idx, event)
        if idx == 2 and event.get("status") == "ok":
            two_done.set()

    def run() -> None:
        try:
            outcome["result"] = client.synth_batch_streaming(
                sections,
                on_progress,
                base=f"http://127.0.0.1:{port}",
                reattach_attempts=8,
                reattach_delay=0.2,
            )
        except Exception as exc:  # handed to the test thread
            outcome["error"] = exc

    caller = threading.Thread(target=run)
    caller.start()
    try:
        assert two_done.wait(seconds(30))
        processes[0].send_signal(signal.SIGKILL)
        processes[0].wait()
        oks_from_first = sum(1 for _, e in recorder.calls if e["event"] == "progress" and e["status"] == "ok")
        assert oks_from_first < 8, "the batch finished before the kill"
        processes.append(
            start_worker_process(state, port, delay=0.0, timeout=seconds(30), output_root=tmp_path)
        )
        caller.join(seconds(60))
        assert not caller.is_alive() and "error" not in outcome, outcome
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=seconds(10))
    result = outcome["result"]
    assert [s["idx"] for s in result["sections"]] == list(range(8)) and result["errors"] == []
    logged = recorder.logged()
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    oks = [e["idx"] for e in logged if e["event"] == "progress" and e["status"] == "ok"]
    assert sorted(oks) == list(range(8)) and len(oks) == 8


async def test_a_re_attach_waits_for_the_restarted_worker_while_it_loads(settings):
    """The worker that took the batch is gone after its `start`; the restarted one reads its kept jobs
    (on an NPU it compiles for minutes), answering the re-attach `Loading` 503, `Retry-After: 1`. That
    answer spent an attempt (here the only one: the batch was given up at once, the job then ran to its
    end unheard); now the client says it waits, and follows the job to `done` once the worker is up."""
    job_id = write_job(Path(settings.state_dir), time.time(), ["재개.", "둘."])
    engine = ToneEngine()
    scheduler, listener, gate, reached = await serve_holding_the_reading(settings, engine)

    relay = relay_to(listener.port)  # the restarted worker's answer, as it sends it

    start = {"event": "start", "total": 2, "backend": "tone", "device": "cpu", "job_id": job_id, "seq": 1}
    events: list[dict[str, Any]] = []

    def on_progress(idx: int, event: dict[str, Any]) -> None:
        events.append(event)
        if event["event"] == "waiting":
            gate.set()  # the reading goes on: the worker is up by the next try

    try:
        await asyncio.to_thread(reached.wait, seconds(30))
        script = lambda method, path: ndjson(start) if method == "POST" else relay(method, path)  # noqa: E731
        async with RogueWorker(script) as gone, asyncio.timeout(seconds(30)):
            result = await aio.synth_batch_streaming(
                [{"idx": 0, "text": "재개."}], on_progress, base=gone.base, reattach_attempts=0
            )
    finally:
        gate.set()
        await listener.close()
    [waiting] = [event for event in events if event["event"] == "waiting"]
    assert (waiting["status"], waiting["retry_after"]) == (503, 1.0)
    assert waiting["error"].startswith("Loading: the worker is still reading the kept jobs")
    assert result["job_id"] == job_id and result["ok_count"] == 2 and result["done"]["ok_count"] == 2
    # a callback of before `stream_lost` (`event["seq"]` on every event but `waiting`) still works
    assert [event["seq"] for event in events if event["event"] != "waiting"] == list(range(1, 7))


@pytest.fixture
def start_node(tmp_path: Path, redis_server: Any) -> Any:
    yield from node_starter(tmp_path, redis_server)


@pytest.mark.allow_blocking
def test_polling_waits_out_a_redis_restart(tmp_path, start_node, redis_server):
    """A cluster node answers every poll `QueueUnavailable` 503 while Redis is away, and its job goes on
    once Redis is back (its snapshot keeps the jobs). That answer had no Retry-After, so each poll spent
    an attempt: a polling client gave up after ≈ 40 s of a Redis restart (here: the only attempt). The
    node now says `Retry-After: 1`, and the client waits, saying so, up to its wait limit."""
    node = start_node("one", delay=0.02)
    sections = [{"idx": i, "text": f"섹션 {i}", "output_path": str(tmp_path / f"s{i}.wav")} for i in range(6)]
    outcome: dict[str, Any] = {}
    running, waiting = threading.Event(), threading.Event()

    def on_progress(idx: int, event: dict[str, Any]) -> None:
        outcome.setdefault("events", []).append(event)
        if event["event"] == "status" and event.get("done", 0) >= 1:
            running.set()
        if event["event"] == "waiting":
            waiting.set()

    def run() -> None:
        try:
            outcome["result"] = client.synth_batch_polling(
                sections, on_progress, base=node.base, poll_interval=0.02, reattach_attempts=0
            )
        except Exception as exc:  # handed to the test thread
            outcome["error"] = exc
            waiting.set()

    caller = threading.Thread(target=run)
    caller.start()
    try:
        assert running.wait(seconds(30))
        redis_server.stop(save=True)
        assert waiting.wait(seconds(30)) and "error" not in outcome, outcome.get("error")
        redis_server.start()
    finally:
        caller.join(seconds(60))
    assert not caller.is_alive() and "error" not in outcome, outcome.get("error")
    assert outcome["result"]["ok_count"] == 6
    said = [event for event in outcome["events"] if event["event"] == "waiting"]
    assert said[0]["status"] == 503 and said[0]["retry_after"] == 1.0
    assert said[0]["error"].startswith("QueueUnavailable: Redis is unreachable")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_cancel_job_waits_for_a_restarted_worker_that_says_it_is_loading(settings, use_async):
    """A restarted worker answers `DELETE /jobs/{id}` `Loading` (503, `Retry-After: 1`) until it has read
    its kept jobs: the cancel was refused once (Ctrl-C then left the job to run, unattended, once the
    worker was up). Now it is sent again when the worker says, and the kept job is cancelled."""
    job_id = write_job(Path(settings.state_dir), time.time(), ["재개.", "둘."])
    engine = ToneEngine()
    engine.gate = threading.Event()  # the resumed job runs until it is cancelled
    scheduler, listener, gate, reached = await serve_holding_the_reading(settings, engine)
    base, events = f"http://127.0.0.1:{listener.port}", []

    def on_progress(idx: int, event: dict[str, Any]) -> None:
        events.append(event)
        gate.set()  # the reading goes on: the worker knows the job by the next try

    try:
        await asyncio.to_thread(reached.wait, seconds(30))
        async with asyncio.timeout(seconds(30)):
            if use_async:
                answer = await aio.cancel_job(job_id, base=base, on_progress=on_progress)
            else:
                answer = await asyncio.to_thread(
                    client.cancel_job, job_id, base=base, on_progress=on_progress
                )
    finally:
        gate.set()
        engine.gate.set()
        await listener.close()
    assert answer["job_id"] == job_id and answer["cancel_requested"] is True
    assert [(event["event"], event["status"]) for event in events] == [("waiting", 503)]
    assert events[0]["error"].startswith("Loading: the worker is still reading the kept jobs")


class EngineThatFailsToLoad(ToneEngine):
    def load(self) -> None:
        raise ModelLoadError("the model directory is gone")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("mode", ["stream", "poll"])
async def test_a_worker_restarted_with_an_engine_that_failed_to_load_is_given_up(
    worker, settings, use_async, mode
):
    """The worker restarted mid-batch (here: it said `Loading` once) and its engine failed to load: it
    runs nothing (it answered the kept job's stream with heartbeats and its status `interrupted`; now a
    500). The client waited for ever; now a restart's signs send it to /health, which says the load failed."""
    job_id = write_job(Path(settings.state_dir), time.time(), ["재개.", "둘."])
    broken = await worker(EngineThatFailsToLoad(), heartbeat_interval=0.1)
    relay = relay_to(broken.port)
    start = {"event": "start", "total": 2, "backend": "tone", "device": "cpu", "job_id": job_id, "seq": 1}
    loading = [True]

    def script(method: str, path: str) -> Any:
        if method == "POST":
            accepted = json.dumps({"job_id": job_id, "status": "queued", "total": 2}).encode()
            return ndjson(start) if mode == "stream" else reply(200, accepted)
        if loading[0] and path != "/health":
            loading[0] = False
            return reply(
                503, b'{"error": "Loading: the engine is still loading"}', headers="Retry-After: 0\r\n"
            )
        return relay(method, path)

    name = f"{'async_' if use_async else ''}synth_batch_{'streaming' if mode == 'stream' else 'polling'}"
    call = getattr(client, name)
    options = {"reattach_delay": 0.01, "poll_interval": 0.01} if mode == "poll" else {"reattach_delay": 0.01}
    async with RogueWorker(script) as front:
        with pytest.raises(client.EngineFailed) as failed:
            async with asyncio.timeout(seconds(10)):
                if use_async:
                    await call([{"idx": 0, "text": "재개."}], base=front.base, **options)
                else:
                    await asyncio.to_thread(call, [{"idx": 0, "text": "재개."}], base=front.base, **options)
    assert str(failed.value) == (
        f"job {job_id}: the worker failed to start (ModelLoadError: the model directory is gone),"
        " so it runs no job; the job runs once a worker that loads takes it up"
    )
    assert front.requests[-1] == ("GET", "/health")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_stream_gone_silent_while_the_worker_restarted_with_a_failed_engine_is_given_up(
    worker, settings, use_async
):
    """The worker's host went away without a word (a reboot, a hung host: no reset reaches a client that
    only reads), so the stream broke by `read_timeout`; meanwhile the worker had restarted and its
    engine failed to load. The first re-attach, at once, met no restart's sign (no refusal, no "not
    now") and followed the failed worker's heartbeats for ever; a silence is a sign too: /health first."""
    job_id = write_job(Path(settings.state_dir), time.time(), ["재개.", "둘."])
    broken = await worker(EngineThatFailsToLoad(), heartbeat_interval=0.1)
    relay = relay_to(broken.port)
    start = {"event": "start", "total": 2, "backend": "tone", "device": "cpu", "job_id": job_id, "seq": 1}
    released = asyncio.Event()

    async def silent_after_start() -> Any:
        yield ndjson(start)
        await released.wait()  # no more bytes, no end: the host is gone

    def script(method: str, path: str) -> Any:
        return silent_after_start() if method == "POST" else relay(method, path)

    call = client.async_synth_batch_streaming if use_async else client.synth_batch_streaming
    options = {"reattach_delay": 0.01, "read_timeout": 1.0}
    try:
        async with RogueWorker(script) as front:
            with pytest.raises(client.EngineFailed, match=f"job {job_id}: the worker failed to start"):
                async with asyncio.timeout(seconds(10)):
                    if use_async:
                        await call([{"idx": 0, "text": "재개."}], base=front.base, **options)
                    else:
                        await asyncio.to_thread(
                            call, [{"idx": 0, "text": "재개."}], base=front.base, **options
                        )
            assert ("GET", "/health") in front.requests
    finally:
        released.set()
