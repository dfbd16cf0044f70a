"""A second engine instance for previews (`--preview-lanes 2`, the default): a preview that arrives while
another section is being made starts at once on the preview lane, when the engine has a `lane()`.

The tone engine's `lane()` makes a sibling that records what it made into the same list; a request
whose text starts with "hold" waits on the test's gate, so what runs meanwhile shows.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine.base import SynthesisRequest
from tests.test_http_api import read_ndjson
from tests.test_ws_support import batch, connect, run_request
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


class LanedTone(ToneEngine):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hold = threading.Event()
        self.made: list[tuple[str, str, float, float]] = []  # text, thread, start, end (shared by lanes)
        self.kwargs = kwargs

    def lane(self) -> LanedTone:
        sibling = LanedTone(**self.kwargs)
        sibling.hold, sibling.made = self.hold, self.made
        return sibling

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        started = time.monotonic()
        if request.text.startswith("hold"):
            assert self.hold.wait(seconds(20)), "the test never released the held request"
        yield from super().stream(request)
        self.made.append((request.text, threading.current_thread().name, started, time.monotonic()))


async def hold_a_preview(client: Any) -> tuple[Any, Any, asyncio.Task[Any]]:
    """Two sockets; on the first a preview the engine holds (until `engine.hold` is set), running."""
    held_ws, ws = await connect(client), await connect(client)
    held = asyncio.create_task(run_request(held_ws, batch("hold this one.")))
    await until(lambda: client.app[SCHEDULER_KEY].admission.running_job() is not None, "the held preview")
    return held_ws, ws, held


async def hold_a_batch(client: Any, tmp_path: Any) -> asyncio.Task[Any]:
    """A one-section `/synth_batch` ("hold batch.") held on the engine thread, running; the task is
    its response."""
    held = {"idx": 0, "text": "hold batch.", "output_path": str(tmp_path / "b.wav")}
    response = asyncio.create_task(client.post("/synth_batch", json={"sections": [held]}))
    await until(lambda: client.app[SCHEDULER_KEY].admission.running_job() is not None, "the held batch")
    return response


def one_after_another(engine: LanedTone, texts: list[str]) -> bool:
    """The sections made for `texts` ran in order, none starting before the one before it ended."""
    spans = {text: (start, end) for text, _, start, end in engine.made}
    ordered = [spans[text] for text in texts]
    return all(end <= next_start for (_, end), (next_start, _) in zip(ordered, ordered[1:], strict=False))


async def test_a_preview_starts_while_another_section_is_made(worker):
    engine = LanedTone()
    client = await worker(engine)
    held_ws, ws, held = await hold_a_preview(client)
    transcript = await run_request(ws, batch("빠른 미리 듣기."))  # done while the other is still held
    assert transcript.events("first_audio") and not held.done()
    assert [text for text, *_ in engine.made] == ["빠른 미리 듣기."]
    engine.hold.set()
    assert (await held).events("done")
    threads = {text: thread for text, thread, *_ in engine.made}
    assert set(threads.values()) == {"npu-worker-engine", "npu-worker-engine-2"}
    await held_ws.close()
    await ws.close()


async def test_previews_one_after_another_stay_on_the_engine_thread(worker):
    """Both threads waited for work and whichever woke first took the next preview: previews one
    after another took turns, each on the thread (and espeak child) that had been idle longest, its
    caches cold (≈ 0.6–1 ms more CPU a preview; benchmarks/SERVER_OVERHEAD.md, 2026-12-06). The lane
    takes a streaming preview only while the engine thread is not waiting for work."""
    engine = LanedTone()
    client = await worker(engine)
    admission = client.app[SCHEDULER_KEY].admission
    ws = await connect(client)
    try:
        for i in range(6):
            await until(lambda: admission._engine_waiting, "the engine thread back to waiting for work")
            assert (await run_request(ws, batch(f"하나씩 오는 미리 듣기 {i}."))).events("done")
    finally:
        await ws.close()
    assert {thread for _, thread, *_ in engine.made} == {"npu-worker-engine"}


async def test_the_engine_thread_serves_while_the_preview_lanes_load(worker, tmp_path):
    """The engine thread loaded every preview lane's engine (espeak: 0.3–0.4 s each) before it served
    anything, after `/ready` had said ready: the first request after start waited 0.36 s with two lanes,
    1.1 s with four. Each lane loads its engine on its own thread; the engine thread serves at once."""
    engine = LanedTone()
    lanes_load = threading.Event()
    make_lane = engine.lane

    def held_lane() -> LanedTone:
        sibling = make_lane()
        sibling.load_gate = lanes_load  # (ToneEngine.load waits on it)
        return sibling

    engine.lane = held_lane  # type: ignore[method-assign]
    client = await worker(engine, preview_lanes=3)
    ws = await connect(client)
    try:
        preview = await asyncio.wait_for(run_request(ws, batch("레인이 열리는 동안.")), seconds(5))
        body = {"text": "레인이 열리는 동안의 문장.", "output_path": str(tmp_path / "s.wav")}
        synth = await asyncio.wait_for(client.post("/synth", json=body), seconds(5))
        assert preview.events("done") and (await synth.json())["status"] == "ok"
    finally:
        lanes_load.set()
    held_ws, other_ws, held = await hold_a_preview(client)  # the lanes are open now: one takes the next
    transcript = await asyncio.wait_for(run_request(other_ws, batch("열린 레인.")), seconds(10))
    assert transcript.events("done") and not held.done()
    engine.hold.set()
    assert (await held).events("done")
    threads = {text: thread for text, thread, *_ in engine.made}
    assert threads["레인이 열리는 동안."] == threads["레인이 열리는 동안의 문장."] == "npu-worker-engine"
    assert threads["열린 레인."] != threads["hold this one."]  # (a lane took one of them)
    for socket in (ws, held_ws, other_ws):
        await socket.close()


async def test_with_one_lane_a_preview_waits_for_the_section_being_made(worker):
    engine = LanedTone()
    client = await worker(engine, preview_lanes=1)
    held_ws, ws, held = await hold_a_preview(client)
    waiting = asyncio.create_task(run_request(ws, batch("기다리는 미리 듣기.")))
    await asyncio.sleep(0.3)
    assert engine.made == [] and not waiting.done()  # the only engine thread is held
    engine.hold.set()
    assert (await held).events("done") and (await waiting).events("done")
    assert [text for text, *_ in engine.made] == ["hold this one.", "기다리는 미리 듣기."]
    assert {thread for _, thread, *_ in engine.made} == {"npu-worker-engine"}
    await held_ws.close()
    await ws.close()


async def test_batches_stay_on_the_engine_thread_and_a_previews_sections_never_overlap(worker, tmp_path):
    engine = LanedTone(delay_per_chunk=0.002)
    client = await worker(engine)
    sections = [
        {"idx": i, "text": f"hold batch {i}.", "output_path": str(tmp_path / f"{i}.wav")} for i in range(3)
    ]
    response = asyncio.create_task(client.post("/synth_batch", json={"sections": sections}))
    await until(lambda: client.app[SCHEDULER_KEY].admission.running_job() is not None)
    ws = await connect(client)
    texts = [f"미리 듣기 {i}번 문장." for i in range(4)]
    transcript = await run_request(ws, batch(*texts))  # all on the preview lane: the batch is held
    assert [e["idx"] for e in transcript.events("progress") if e["status"] == "ok"] == [0, 1, 2, 3]
    engine.hold.set()
    events = await read_ndjson(await response)
    assert events[-1]["event"] == "done" and events[-1]["ok_count"] == 3
    threads = {text: thread for text, thread, *_ in engine.made}
    assert all(threads[s["text"]] == "npu-worker-engine" for s in sections)
    assert one_after_another(engine, texts)
    await ws.close()


async def test_a_preview_cancelled_beside_a_held_section_stops(worker):
    engine = LanedTone(chunk_seconds=0.01, delay_per_chunk=0.01)
    client = await worker(engine)
    held_ws, ws, held = await hold_a_preview(client)
    await ws.send_json(batch("긴 미리 듣기 " * 20))
    scheduler = client.app[SCHEDULER_KEY]
    await until(lambda: len(scheduler.admission.running_jobs()) == 2)
    await ws.close()  # a dropped socket cancels its preview
    await until(lambda: len(scheduler.admission.running_jobs()) == 1)
    engine.hold.set()
    assert (await held).events("done")
    assert [text for text, *_ in engine.made] == ["hold this one."]  # the long one never finished
    await held_ws.close()


async def test_a_lane_that_frees_up_never_takes_a_section_beside_the_same_previews_running_one(worker):
    engine = LanedTone(chunk_seconds=0.05, delay_per_chunk=0.01)
    client = await worker(engine)
    held_ws, ws, held = await hold_a_preview(client)
    texts = [f"한 레인이 비었을 때 {i}번 문장." for i in range(6)]
    preview = asyncio.create_task(run_request(ws, batch(*texts)))
    await until(lambda: any(text == texts[0] for text, *_ in engine.made))
    engine.hold.set()  # the held lane is free now, while the preview's next section runs on the other
    transcript = await preview
    assert (await held).events("done")
    assert [e["idx"] for e in transcript.events("progress") if e["status"] == "ok"] == list(range(6))
    assert one_after_another(engine, texts)
    await held_ws.close()
    await ws.close()


async def test_a_synth_runs_on_the_preview_lane_while_the_engine_thread_is_busy(worker, tmp_path):
    engine = LanedTone()
    client = await worker(engine)
    response = await hold_a_batch(client, tmp_path)
    try:
        quick = await asyncio.wait_for(
            client.post("/synth", json={"text": "빠른 문장.", "output_path": str(tmp_path / "q.wav")}),
            seconds(10),
        )
        assert (await quick.json())["status"] == "ok"
        assert [text for text, *_ in engine.made] == ["빠른 문장."]  # the batch is still held
    finally:
        engine.hold.set()
    events = await read_ndjson(await response)
    assert events[-1]["event"] == "done" and events[-1]["ok_count"] == 1
    threads = {text: thread for text, thread, *_ in engine.made}
    assert threads == {"빠른 문장.": "npu-worker-engine-2", "hold batch.": "npu-worker-engine"}


async def test_a_ws_request_without_audio_runs_on_the_preview_lane_while_the_engine_thread_is_busy(
    worker, tmp_path
):
    engine = LanedTone()
    client = await worker(engine)
    response = await hold_a_batch(client, tmp_path)
    ws = await connect(client)
    try:
        transcript = await asyncio.wait_for(run_request(ws, batch("소리 없이.", audio=False)), seconds(10))
        assert transcript.events("done") and [text for text, *_ in engine.made] == ["소리 없이."]
    finally:
        engine.hold.set()
    assert (await read_ndjson(await response))[-1]["ok_count"] == 1
    assert {text: thread for text, thread, *_ in engine.made}["소리 없이."] == "npu-worker-engine-2"
    await ws.close()


async def test_a_synth_takes_the_engine_thread_when_it_is_free(worker, tmp_path):
    engine = LanedTone()
    client = await worker(engine)
    for i in range(3):
        body = {"text": f"혼자 오는 문장 {i}.", "output_path": str(tmp_path / f"{i}.wav")}
        assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    assert {thread for _, thread, *_ in engine.made} == {"npu-worker-engine"}


async def test_a_synth_never_runs_on_the_preview_lane_with_one_lane(worker, tmp_path):
    engine = LanedTone()
    client = await worker(engine, preview_lanes=1)
    response = await hold_a_batch(client, tmp_path)
    body = {"text": "기다리는 문장.", "output_path": str(tmp_path / "w.wav")}
    waiting = asyncio.create_task(client.post("/synth", json=body))
    await asyncio.sleep(0.3)
    assert not waiting.done() and engine.made == []  # the only engine thread is held
    engine.hold.set()
    assert (await (await waiting).json())["status"] == "ok"
    assert (await read_ndjson(await response))[-1]["ok_count"] == 1
    assert {thread for _, thread, *_ in engine.made} == {"npu-worker-engine"}


async def test_with_three_lanes_a_preview_starts_while_a_batch_and_another_preview_are_made(worker, tmp_path):
    engine = LanedTone()
    client = await worker(engine, preview_lanes=3)
    response = await hold_a_batch(client, tmp_path)
    admission = client.app[SCHEDULER_KEY].admission
    held_ws, ws = await connect(client), await connect(client)
    held_preview = asyncio.create_task(run_request(held_ws, batch("hold this preview.")))
    await until(lambda: len(admission.running_jobs()) == 2, "the held preview beside the batch")
    try:
        transcript = await asyncio.wait_for(run_request(ws, batch("세 번째 레인.")), seconds(10))
        assert transcript.events("done") and [text for text, *_ in engine.made] == ["세 번째 레인."]
    finally:
        engine.hold.set()
    assert (await held_preview).events("done")
    assert (await read_ndjson(await response))[-1]["ok_count"] == 1
    threads = {text: thread for text, thread, *_ in engine.made}
    assert threads["hold batch."] == "npu-worker-engine"
    assert {threads["hold this preview."], threads["세 번째 레인."]} == {
        "npu-worker-engine-2",
        "npu-worker-engine-3",
    }
    await held_ws.close()
    await ws.close()


async def test_a_synth_a_lane_ends_after_the_engine_thread_stopped_at_a_shutdown_is_answered(
    worker, tmp_path
):
    """At a shutdown the engine thread, with no section, stopped at once and closed the finisher
    thread; a `/synth` that a lane took while the engine thread was busy, still being made, then
    handed its end (its file, `ok`, `done`) to that closed finisher: the drain waited for the section
    ("let section 0 ... finish"), but its file was never written and it never ended (a real `serve`
    then answered it `Cancelled` at the shutdown's end of the waits; here, with the drain alone, never)."""
    engine = LanedTone()
    engine.gate = threading.Event()  # the engine thread's instance only (a lane's is made without it)
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    admission, runner = scheduler.admission, scheduler.runner
    await until(lambda: admission._lanes_waiting == 1, "the preview lane loaded and waiting")
    batch_section = {"idx": 0, "text": "배치 문장.", "output_path": str(tmp_path / "b.wav")}
    await client.post("/synth_batch?async=1", json={"sections": [batch_section]})
    await until(lambda: admission.running_job() is not None, "the batch held on the engine thread")
    body = {"text": "hold this synth.", "output_path": str(tmp_path / "s.wav")}
    synth = asyncio.create_task(client.post("/synth", json=body))
    await until(lambda: len(admission.running_jobs()) == 2, "the /synth on the lane, held")
    engine.gate.set()
    await until(lambda: admission._engine_waiting, "the batch made; the engine thread waits")
    drain = asyncio.create_task(scheduler.drain(grace=seconds(20)))
    try:
        await until(lambda: not runner._thread.is_alive(), "the engine thread stopped")
    finally:
        engine.hold.set()  # the lane's `/synth` ends now
    answer = await asyncio.wait_for(synth, seconds(20))
    assert (await answer.json())["status"] == "ok"
    assert (tmp_path / "s.wav").stat().st_size > 44
    await asyncio.wait_for(drain, seconds(20))


async def test_a_lane_loaded_once_the_shutdown_began_is_closed_unsaid(worker, caplog):
    """A worker stopped while a lane's engine loaded (espeak: 0.3–0.4 s after `engine ready`) logged
    "preview lanes: 2 engine instances" after its shutdown lines: a lane said open for previews that would
    never come. It is closed, and nothing said."""
    caplog.set_level(logging.INFO, logger="npu_worker.jobs.preview_lanes")
    engine, lanes_load, lanes = LanedTone(), threading.Event(), []
    make_lane = engine.lane

    def held_lane() -> LanedTone:
        sibling = make_lane()
        sibling.load_gate = lanes_load  # (ToneEngine.load waits on it)
        lanes.append(sibling)
        return sibling

    engine.lane = held_lane  # type: ignore[method-assign]
    client = await worker(engine, preview_lanes=2)
    runner = client.app[SCHEDULER_KEY].runner
    admission = client.app[SCHEDULER_KEY].admission

    def load_once_stopping() -> None:  # another thread's flag: a poll with a deadline
        deadline = time.monotonic() + seconds(30)
        while not admission.stopping and time.monotonic() < deadline:
            time.sleep(0.01)
        lanes_load.set()

    releaser = threading.Thread(target=load_once_stopping)
    releaser.start()
    try:
        await client.close()
    finally:
        lanes_load.set()
        await asyncio.to_thread(releaser.join)
    for lane in runner.lanes.threads:
        await asyncio.to_thread(lane.join, seconds(10))
    assert lanes and admission.stopping and not any(lane.is_alive() for lane in runner.lanes.threads)
    assert "engine instances" not in caplog.text, caplog.text
