"""The pipeline client against a live worker on a real socket: streaming, re-attach, polling, errors."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from npu_worker import client
from npu_worker.client import NotConnected, TransportError, WorkerHTTPError, aio
from npu_worker.client.collector import UNLOGGED_EVENTS
from tests.cut_proxy import CuttableProxy
from tests.timing import seconds
from tests.tone_engine import HeldLoad, ToneEngine
from tests.worker_process import refusing_port

ROOT = Path(__file__).resolve().parents[1]


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


def lecture(tmp_path: Path, count: int, texts: dict[int, str] | None = None) -> list[dict[str, Any]]:
    texts = texts or {}
    return [
        {"idx": i, "text": texts.get(i, f"section {i} text"), "output_path": str(tmp_path / f"s{i:02d}.wav")}
        for i in range(count)
    ]


class Recorder:
    """An on_progress callback that keeps every call (it runs on the client's thread)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, dict[str, Any]]] = []

    def __call__(self, idx: int, event: dict[str, Any]) -> None:
        self.calls.append((idx, event))

    def logged(self) -> list[dict[str, Any]]:
        return [event for _, event in self.calls if event["event"] not in UNLOGGED_EVENTS]


async def test_stream_returns_the_sketch_result_and_reports_each_event(worker, tmp_path):
    server = await worker()
    sections = lecture(tmp_path, 3)
    recorder = Recorder()
    result = await asyncio.to_thread(client.synth_batch_streaming, sections, recorder, base=base_of(server))
    assert [s["idx"] for s in result["sections"]] == [0, 1, 2]
    assert result["wav_paths"] == [s["output_path"] for s in sections]
    assert all(Path(p).stat().st_size > 44 for p in result["wav_paths"])
    assert result["errors"] == [] and result["done"]["ok_count"] == 3
    kinds = [(idx, e["event"], e.get("status")) for idx, e in recorder.calls]
    assert kinds[0] == (-1, "start", None) and kinds[-1] == (-1, "done", None)
    assert (1, "progress", "ok") in kinds


async def test_base_url_comes_from_tts_worker_base(worker, tmp_path, monkeypatch):
    server = await worker()
    monkeypatch.setenv("TTS_WORKER_BASE", base_of(server) + "/")
    body = await asyncio.to_thread(client.synth, "안녕하세요.", str(tmp_path / "one.wav"))
    assert body["status"] == "ok" and body["wav_path"] == str(tmp_path / "one.wav")


async def test_a_per_call_base_overrides_the_environment(worker, tmp_path, monkeypatch):
    server = await worker()
    monkeypatch.setenv("TTS_WORKER_BASE", "http://127.0.0.1:9")
    body = await asyncio.to_thread(client.synth, "hello", str(tmp_path / "x.wav"), base=base_of(server))
    assert body["status"] == "ok"


async def test_failed_sections_are_reported_not_raised(worker, tmp_path):
    server = await worker(ToneEngine(fail_on="BOOM"))
    sections = lecture(tmp_path, 4, {1: "BOOM here", 3: "   "})
    recorder = Recorder()
    result = await asyncio.to_thread(client.synth_batch_streaming, sections, recorder, base=base_of(server))
    assert [s["idx"] for s in result["sections"]] == [0, 2]
    assert [(e["idx"], e["error"].split(":")[0]) for e in result["errors"]] == [
        (1, "EngineError"),
        (3, "EmptyText"),
    ]
    assert result["fail_count"] == 2 and result["done"]["fail_count"] == 2
    assert [idx for idx, e in recorder.calls if e["event"] == "error"] == [1, 3]


async def test_a_refused_request_raises_with_the_error_name(worker, tmp_path):
    server = await worker()
    sections = [{"idx": 0, "text": "a"}, {"idx": 0, "text": "b"}]
    with pytest.raises(WorkerHTTPError) as caught:
        await asyncio.to_thread(client.synth_batch_streaming, sections, base=base_of(server))
    assert caught.value.status == 400 and caught.value.error_name == "DuplicateIndex"


async def test_a_refused_connection_is_told_apart_from_one_that_broke():
    """Nothing listens on the port (bound, not listening): both clients say NotConnected, which tells
    the plan that nothing was sent (see test_client_core), and give up at once on a first try."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{bound.getsockname()[1]}"
        with pytest.raises(NotConnected, match="POST"):
            await asyncio.to_thread(client.synth_batch_streaming, [{"text": "a"}], base=dead)
        with pytest.raises(NotConnected, match="POST"):
            await aio.synth_batch_polling([{"text": "a"}], base=dead)


async def test_an_unreachable_worker_is_a_transport_error():
    with refusing_port() as port:
        dead = f"http://127.0.0.1:{port}"
        with pytest.raises(TransportError):
            await asyncio.to_thread(client.synth_batch_streaming, [{"text": "a"}], base=dead)
        with pytest.raises(TransportError):
            await aio.synth("a", "/tmp/x.wav", base=dead)


async def cut_mid_batch(
    server: Any, tmp_path: Path, use_async: bool
) -> tuple[Recorder, dict, CuttableProxy, dict[str, Any]]:
    """39 sections through a proxy. After section 10 the client stalls and the proxy holds back what the
    worker sends; once the worker is 5 sections ahead, the test cuts the connection (the held bytes are
    lost) and lets the client go on: it must re-attach and get exactly what it is missing."""
    proxy = await CuttableProxy(server.port).start()
    loop = asyncio.get_running_loop()
    reached, resume_async, resume_sync = asyncio.Event(), asyncio.Event(), threading.Event()
    recorder = Recorder()

    def is_cut_point(idx: int, event: dict[str, Any]) -> bool:
        return idx == 10 and event["event"] == "progress" and event["status"] == "ok"

    def on_progress(idx: int, event: dict[str, Any]) -> None:  # sync client: runs on its thread
        recorder(idx, event)
        if is_cut_point(idx, event):
            loop.call_soon_threadsafe(proxy.hold)
            loop.call_soon_threadsafe(reached.set)
            resume_sync.wait(seconds(20))

    async def on_progress_async(idx: int, event: dict[str, Any]) -> None:
        recorder(idx, event)
        if is_cut_point(idx, event):
            proxy.hold()
            reached.set()
            await resume_async.wait()

    async def cut_when_ahead() -> dict[str, Any]:
        await reached.wait()
        while True:  # the worker runs on while the client is stalled: let it get 5 sections ahead
            [job] = (await (await server.session.get(f"{base_of(server)}/jobs")).json())["jobs"]
            if job["done"] >= 16:
                break
            await asyncio.sleep(0.01)
        proxy.cut()
        resume_sync.set()
        resume_async.set()
        return job

    sections = lecture(tmp_path, 39)
    kwargs = {"base": proxy.base, "reattach_delay": 0.05}
    cutter = asyncio.create_task(cut_when_ahead())
    async with asyncio.timeout(seconds(30)):
        if use_async:
            result = await aio.synth_batch_streaming(sections, on_progress_async, **kwargs)
        else:
            result = await asyncio.to_thread(client.synth_batch_streaming, sections, on_progress, **kwargs)
        job_at_cut = await cutter
    await proxy.close()
    return recorder, result, proxy, job_at_cut


@pytest.fixture
async def gated_worker(worker):
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = threading.Event()
    engine.gate.set()
    return await worker(engine), engine


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_reattach_after_a_cut_delivers_every_event_exactly_once(worker, tmp_path, use_async):
    server = await worker(ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01))
    recorder, result, proxy, job_at_cut = await cut_mid_batch(server, tmp_path, use_async)
    assert job_at_cut["status"] == "running" and 16 <= job_at_cut["done"] < 39, "the cut must land mid-batch"
    assert proxy.connections >= 2, "the stream was never re-attached"
    logged = recorder.logged()
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    oks = [e["idx"] for e in logged if e["event"] == "progress" and e["status"] == "ok"]
    assert oks == list(range(39))
    assert logged[-1]["event"] == "done" and logged[-1]["ok_count"] == 39
    assert len(result["wav_paths"]) == 39 and result["errors"] == []
    # The same events as the worker's own log, in the same order.
    async with server.session.get(f"{base_of(server)}/jobs/{result['job_id']}/events?after=0") as response:
        log = [line for line in (await response.text()).splitlines() if '"heartbeat"' not in line]
    assert len(log) == len(logged)


async def test_reattach_gives_up_with_a_transport_error_when_the_worker_is_gone(gated_worker, tmp_path):
    server, engine = gated_worker
    proxy = await CuttableProxy(server.port).start()
    loop = asyncio.get_running_loop()
    reached = asyncio.Event()

    def on_progress(idx: int, event: dict[str, Any]) -> None:
        if event["event"] == "progress" and event["status"] == "ok":
            engine.gate.clear()
            loop.call_soon_threadsafe(reached.set)

    call = asyncio.create_task(
        aio.synth_batch_streaming(
            lecture(tmp_path, 5), on_progress, base=proxy.base, reattach_attempts=2, reattach_delay=0.01
        )
    )
    async with asyncio.timeout(seconds(20)):
        await reached.wait()
        await proxy.close()  # cut, and refuse every re-attach
        with pytest.raises(TransportError, match="re-attaching failed"):
            await call
    engine.gate.set()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_polling_mode_returns_the_same_result(worker, tmp_path, use_async):
    server = await worker(ToneEngine(fail_on="BOOM"))
    sections = lecture(tmp_path, 5, {2: "BOOM"})
    recorder = Recorder()
    kwargs = {"base": base_of(server), "poll_interval": 0.02}
    async with asyncio.timeout(seconds(30)):
        if use_async:
            result = await aio.synth_batch_polling(sections, recorder, **kwargs)
        else:
            result = await asyncio.to_thread(client.synth_batch_polling, sections, recorder, **kwargs)
    assert [s["idx"] for s in result["sections"]] == [0, 1, 3, 4]
    assert result["wav_paths"] == [sections[i]["output_path"] for i in (0, 1, 3, 4)]
    assert [e["idx"] for e in result["errors"]] == [2]
    kinds = [e["event"] for _, e in recorder.calls]
    assert kinds[0] == "status" and kinds[-1] == "done"
    assert recorder.calls[-1][1]["fail_count"] == 1
    assert sorted(idx for idx, e in recorder.calls if e["event"] in ("progress", "error")) == [0, 1, 2, 3, 4]


async def test_async_callbacks_may_be_coroutines(worker, tmp_path):
    server = await worker()
    seen: list[str] = []

    async def on_progress(idx: int, event: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        seen.append(event["event"])

    result = await aio.synth_batch_streaming(lecture(tmp_path, 2), on_progress, base=base_of(server))
    assert result["ok_count"] == 2 and seen[0] == "start" and seen[-1] == "done"


async def test_heartbeats_reach_the_callback_but_are_not_counted(worker, tmp_path):
    server = await worker(ToneEngine(delay_per_chunk=0.05, chunk_seconds=0.05), heartbeat_interval=0.02)
    recorder = Recorder()
    result = await aio.synth_batch_streaming(lecture(tmp_path, 1), recorder, base=base_of(server))
    assert any(e["event"] == "heartbeat" for _, e in recorder.calls)
    assert result["ok_count"] == 1
    assert [e["seq"] for e in recorder.logged()] == [1, 2, 3, 4]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_cancel_job_stops_a_batch_and_says_when_it_had_ended(gated_worker, tmp_path, use_async):
    server, engine = gated_worker
    engine.gate.clear()  # the first section waits: the job is running when it is cancelled
    accepted = await (
        await server.post("/synth_batch?async=1", json={"sections": lecture(tmp_path, 3)})
    ).json()

    async def cancel(job_id: str) -> dict[str, Any]:
        if use_async:
            return await aio.cancel_job(job_id, base=base_of(server))
        return await asyncio.to_thread(client.cancel_job, job_id, base=base_of(server))

    first = await cancel(accepted["job_id"])
    engine.gate.set()
    assert first["job_id"] == accepted["job_id"] and first["cancel_requested"] is True
    async with asyncio.timeout(seconds(10)):
        while (await cancel(accepted["job_id"]))["cancel_requested"]:
            await asyncio.sleep(0.02)
    assert (await (await server.get(f"/jobs/{accepted['job_id']}/status")).json())["status"] == "cancelled"
    with pytest.raises(WorkerHTTPError) as unknown:
        await cancel("no-such-job")
    assert unknown.value.status == 404 and unknown.value.error_name == "JobNotFound"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_synth_waits_for_a_worker_that_says_it_is_loading(worker, tmp_path, use_async):
    """`synth` sent while the engine loads (right after a start; minutes on an NPU that compiles) was
    refused at once, `HTTP 503: Loading`, while a batch waited; now it waits as the worker asks."""
    engine = HeldLoad()
    server = await worker(engine, wait_loaded=False)
    out, recorder = tmp_path / "one.wav", Recorder()

    def on_progress(idx: int, event: dict[str, Any]) -> None:
        recorder(idx, event)
        engine.loaded.set()  # told to wait: the engine is up by the next try

    options = {"base": base_of(server), "on_progress": on_progress}
    try:
        async with asyncio.timeout(seconds(20)):
            if use_async:
                body = await aio.synth("안녕하세요.", str(out), **options)
            else:
                body = await asyncio.to_thread(client.synth, "안녕하세요.", str(out), **options)
    finally:
        engine.loaded.set()
    assert body["status"] == "ok" and out.stat().st_size > 44 and engine.calls == ["안녕하세요."]
    waits = [event for _, event in recorder.calls if event["event"] == "waiting"]
    assert waits and all(wait["status"] == 503 for wait in waits), recorder.calls
    assert waits[0]["error"].startswith("Loading:") and waits[0]["retry_after"] == 1.0


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("mode", ["stream", "poll"])
async def test_a_job_that_makes_no_progress_is_given_up_after_the_stall_limit(
    worker, tmp_path, use_async, mode
):
    """An engine hung in a call that never returns: the worker kept the job `running` and the stream
    alive with heartbeats (polling: the same status), so the client waited for ever. With
    `stall_limit` it gives up once the job has made no progress that long; the job is left running."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the first section never ends until the test lets it
    server = await worker(engine, heartbeat_interval=0.1)
    name = f"{'async_' if use_async else ''}synth_batch_{'streaming' if mode == 'stream' else 'polling'}"
    call = getattr(client, name)
    options: dict[str, Any] = {"base": base_of(server), "stall_limit": 0.5}
    if mode == "poll":
        options["poll_interval"] = 0.05
    recorder = Recorder()
    try:
        with pytest.raises(client.Stalled, match=r"no progress for 0.5 s \(stall_limit\)") as stalled:
            async with asyncio.timeout(seconds(20)):
                if use_async:
                    await call(lecture(tmp_path, 2), recorder, **options)
                else:
                    await asyncio.to_thread(call, lecture(tmp_path, 2), recorder, **options)
        job_id = next(e["job_id"] for _, e in recorder.calls if e["event"] in ("start", "status"))
        status = await (await server.get(f"/jobs/{job_id}/status")).json()
        assert status["status"] == "running" and status["done"] == 0, status
        assert f"job {job_id}: " in str(stalled.value)
    finally:
        engine.gate.set()


async def test_a_callers_session_that_raises_for_status_still_gets_the_workers_refusals(worker, tmp_path):
    """`session=aiohttp.ClientSession(raise_for_status=True)`, a common setting: aiohttp raised its own
    ClientResponseError for every 4xx/5xx before the client read the answer, so a `Loading` was a
    TransportError (no Retry-After waited for) and a refusal lost its error name."""
    engine = HeldLoad()
    server = await worker(engine, wait_loaded=False)
    try:
        async with aiohttp.ClientSession(raise_for_status=True) as session, asyncio.timeout(seconds(20)):
            body = await aio.synth(
                "안녕하세요.",
                str(tmp_path / "one.wav"),
                base=base_of(server),
                session=session,
                on_progress=lambda idx, event: engine.loaded.set(),
            )
            assert body["status"] == "ok"
            with pytest.raises(WorkerHTTPError) as refused:
                await aio.cancel_job("no-such-job", base=base_of(server), session=session)
    finally:
        engine.loaded.set()
    assert refused.value.status == 404 and refused.value.error_name == "JobNotFound"
