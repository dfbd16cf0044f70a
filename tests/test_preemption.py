"""A preview that arrives while a batch section runs takes the engine at the next step boundary; the
batch section is paused with its state and resumed after, losing nothing (engines that can pause)."""

from __future__ import annotations

import asyncio
import json
import threading
import wave
from collections.abc import Iterator

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine.base import Interrupted, SynthesisRequest
from tests.test_ws_support import AiohttpWs, ChunkGate, receive_until_done
from tests.timing import seconds
from tests.tone_engine import ToneEngine


class PausableTone(ToneEngine):
    """The tone engine declaring, as ZipVoice does, that its streams may be paused and resumed;
    `made` records whose chunk was made in which order."""

    preemptible = True

    def __init__(self, **kwargs) -> None:  # noqa: ANN003
        super().__init__(**kwargs)
        self.made: list[str] = []

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        for chunk in super().stream(request):
            self.made.append(request.text)
            yield chunk


async def wait_until(predicate) -> None:  # noqa: ANN001
    async with asyncio.timeout(seconds(10)):
        while not predicate():
            await asyncio.sleep(0.01)


async def preview_during(client, gate: ChunkGate, running, preview_text: str, tmp_path) -> dict:  # noqa: ANN001
    """Start `running` (a request), let the engine make 2 chunks of it, send a /synth preview, wait
    until it is queued, let everything run; the preview's answer (`running` is awaited too)."""
    first = asyncio.create_task(running)
    gate.allow(2)
    await wait_until(lambda: gate.passed >= 2)
    preview = asyncio.create_task(
        client.post("/synth", json={"text": preview_text, "output_path": str(tmp_path / "p.wav")})
    )
    admission = client.app[SCHEDULER_KEY].admission
    await wait_until(lambda: len(admission.live_jobs()) == 2)  # the preview is queued behind `running`
    gate.open()
    await first
    return await (await preview).json()


async def gated_worker(worker, engine: ToneEngine):  # noqa: ANN001, ANN201
    gate = ChunkGate()
    engine.gate = gate
    return await worker(engine), gate


async def preview_during_a_batch(worker, engine: ToneEngine, batch_text: str, tmp_path) -> dict:  # noqa: ANN001
    """A one-section batch of `batch_text` (to s0.wav), and a "나" * 10 preview while it runs."""
    client, gate = await gated_worker(worker, engine)
    batch = {"sections": [{"idx": 0, "text": batch_text, "output_path": str(tmp_path / "s0.wav")}]}
    submitted = client.post("/synth_batch?async=1", json=batch)
    return await preview_during(client, gate, submitted, "나" * 10, tmp_path)


async def test_a_preview_runs_inside_a_paused_batch_section_which_then_loses_nothing(worker, tmp_path):
    engine = PausableTone(chunk_seconds=0.1)
    long_text, preview_text = "가" * 100, "나" * 10  # 20 chunks; 2 chunks
    assert (await preview_during_a_batch(worker, engine, long_text, tmp_path))["status"] == "ok"
    await wait_until(lambda: engine.made.count(long_text) == 20)
    first_preview = engine.made.index(preview_text)
    assert 2 <= first_preview < 20  # inside the batch section, at a chunk boundary
    assert engine.made[first_preview : first_preview + 2] == [preview_text] * 2
    await wait_until(lambda: (tmp_path / "s0.wav").exists())
    with wave.open(str(tmp_path / "s0.wav")) as written:
        samples = np.frombuffer(written.readframes(written.getnframes()), dtype=np.int16)
    assert samples.size == engine.render(SynthesisRequest(long_text)).size  # nothing lost or doubled


async def test_a_preview_never_pauses_another_preview(worker, tmp_path):
    engine = PausableTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    running = client.post("/synth", json={"text": "가" * 50, "output_path": str(tmp_path / "a.wav")})
    assert (await preview_during(client, gate, running, "나" * 10, tmp_path))["status"] == "ok"
    assert engine.made == ["가" * 50] * 10 + ["나" * 10] * 2


async def test_a_batch_section_pauses_for_a_preview_after_its_previous_section_ended_late(worker, tmp_path):
    """The end of a batch's section 0 runs on the finisher thread, here after section 1 started:
    section 1 still lets a preview in (before, that end took the batch off the running list)."""
    engine = PausableTone(chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    finisher_held = threading.Event()
    scheduler.runner.finisher.submit(finisher_held.wait)  # section 0's end waits behind this
    short, long_text = "가" * 10, "다" * 100  # 2 chunks; 20 chunks
    sections = [{"idx": 0, "text": short}, {"idx": 1, "text": long_text}]
    assert (await client.post("/synth_batch?async=1", json={"sections": sections})).status == 200
    gate.allow(4)
    await wait_until(lambda: engine.made.count(long_text) == 2)  # section 1 under way
    finisher_held.set()
    await wait_until(lambda: scheduler.runner.finisher.idle)  # section 0 ended
    preview = asyncio.create_task(
        client.post("/synth", json={"text": "나" * 10, "output_path": str(tmp_path / "p.wav")})
    )
    await wait_until(lambda: len(scheduler.admission.live_jobs()) == 2)  # the preview queued
    gate.open()
    assert (await (await preview).json())["status"] == "ok"
    await wait_until(lambda: engine.made.count(long_text) == 20)
    last_batch_chunk = len(engine.made) - 1 - engine.made[::-1].index(long_text)
    assert engine.made.index("나" * 10) < last_batch_chunk  # inside section 1, not after it


class UnpausableTone(PausableTone):
    preemptible = False


async def test_an_engine_that_cannot_pause_finishes_its_section_first(worker, tmp_path):
    engine = UnpausableTone(chunk_seconds=0.1)
    assert (await preview_during_a_batch(worker, engine, "가" * 50, tmp_path))["status"] == "ok"
    assert engine.made == ["가" * 50] * 10 + ["나" * 10] * 2  # espeak and sovits keep this behaviour


class StoppableTone(PausableTone):
    """Also stoppable in flight, as ZipVoice's onnxruntime calls are: records what the worker asked
    (`interrupt(restart)`); a stop for a cancel makes the chunk being made fail with `Interrupted`."""

    def __init__(self, **kwargs) -> None:  # noqa: ANN003
        super().__init__(**kwargs)
        self.asked: list[tuple[bool, str]] = []
        self._stop = False

    def interrupt(self, restart: bool) -> bool:
        self.asked.append((restart, self.made[-1] if self.made else ""))
        self._stop = self._stop or not restart
        return True

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        for chunk in super().stream(request):
            if self._stop:
                self._stop = False
                raise Interrupted("stopped in flight")
            yield chunk


async def test_a_cancel_stops_the_running_sections_work_in_flight_and_ends_it_as_cancelled(worker, tmp_path):
    engine = StoppableTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    batch = {"sections": [{"idx": 0, "text": "가" * 100, "output_path": str(tmp_path / "s0.wav")}]}
    job_id = (await (await client.post("/synth_batch?async=1", json=batch)).json())["job_id"]
    gate.allow(2)
    await wait_until(lambda: gate.passed >= 2)
    assert (await (await client.delete(f"/jobs/{job_id}")).json())["cancel_requested"] is True
    assert engine.asked == [(False, "가" * 100)]
    gate.open()
    async with asyncio.timeout(seconds(30)):  # to its `done`: the job's status is final from then on
        events = await client.get(f"/jobs/{job_id}/events")  # (admission let go of it before: on a busy
        lines = [line async for line in events.content if line.strip()]  # CI worker, read as `running`)
    assert json.loads(lines[-1])["event"] == "done"
    result = await (await client.get(f"/jobs/{job_id}/result")).json()
    assert result["status"] == "cancelled"
    assert all(section["status"] != "error" for section in result["sections"])  # a stop is no failure
    assert not (tmp_path / "s0.wav").exists()


async def test_a_preview_that_starts_waiting_behind_a_batch_section_asks_for_an_early_step(worker, tmp_path):
    engine = StoppableTone(chunk_seconds=0.1)
    assert (await preview_during_a_batch(worker, engine, "가" * 100, tmp_path))["status"] == "ok"
    assert engine.asked == [(True, "가" * 100)]  # asked once, while the batch section ran


async def test_a_preview_behind_another_preview_asks_for_nothing(worker, tmp_path):
    engine = StoppableTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    running = client.post("/synth", json={"text": "가" * 50, "output_path": str(tmp_path / "a.wav")})
    assert (await preview_during(client, gate, running, "나" * 10, tmp_path))["status"] == "ok"
    assert engine.asked == []


async def test_a_preview_inside_a_paused_section_is_engine_time_once(worker, tmp_path):
    """The paused batch section's engine time (/metrics: busy seconds, the section histogram) spanned
    the preview it let run, which counted its own too: busy seconds grew faster than the clock."""
    import time

    from npu_worker.http_compat.metrics import METRICS_KEY

    class SlowPreview(PausableTone):
        def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
            for chunk in super().stream(request):
                if request.text == "나" * 10:
                    time.sleep(0.5)  # the preview is most of the wall time
                yield chunk

    engine = SlowPreview(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    registry = client.app[METRICS_KEY].registry
    started = time.monotonic()
    batch = {"sections": [{"idx": 0, "text": "가" * 100, "output_path": str(tmp_path / "s0.wav")}]}
    running = client.post("/synth_batch?async=1", json=batch)
    assert (await preview_during(client, gate, running, "나" * 10, tmp_path))["status"] == "ok"
    await wait_until(lambda: registry.get_sample_value("npu_worker_section_seconds_count") == 2)
    wall = time.monotonic() - started
    assert engine.made.index("나" * 10) < 20  # the preview ran inside the paused section
    assert registry.get_sample_value("npu_worker_engine_busy_seconds_total") < wall


async def first_ws_audio(client, text: str):  # noqa: ANN001, ANN201
    """A /ws preview of `text`, read until its caller hears its first audio; the socket (an AiohttpWs)."""
    ws = AiohttpWs(await client.ws_connect("/ws"))
    await ws.send_json({"type": "synth", "text": text, "audio": True})
    while not isinstance(await ws.receive(), bytes):
        pass
    return ws


async def ws_preview_behind(client, gate: ChunkGate, engine: PausableTone, lender: str) -> None:  # noqa: ANN001
    """A /ws preview of "나" * 10 sent while `lender` (the running preview's text) is under way (its
    gate shut); all run to their end once the preview is queued."""
    admission = client.app[SCHEDULER_KEY].admission
    ws = AiohttpWs(await client.ws_connect("/ws"))
    await ws.send_json({"type": "synth", "text": "나" * 10, "audio": True})
    await wait_until(lambda: len(admission.live_jobs()) == 2)  # queued behind the running preview
    made_before = engine.made.count(lender)
    gate.open()
    assert (await receive_until_done(ws)).done["cancelled"] is False
    await wait_until(lambda: engine.made.count(lender) == 10)
    last_lender_chunk = len(engine.made) - 1 - engine.made[::-1].index(lender)
    assert made_before < 10
    assert engine.made.index("나" * 10) < last_lender_chunk  # inside the running preview's section


async def test_a_ws_preview_waiting_for_its_first_audio_runs_inside_a_preview_heard_already(worker):
    """A paused tab's long preview (its first audio out) kept a new /ws preview waiting for all of it."""
    engine = PausableTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    gate.allow(2)
    heard = await first_ws_audio(client, "가" * 50)  # 10 chunks; this caller then reads nothing more
    await ws_preview_behind(client, gate, engine, "가" * 50)
    assert (await receive_until_done(heard)).done["cancelled"] is False  # it lost nothing: all 10 chunks


async def test_a_ws_preview_runs_inside_a_long_synth(worker, tmp_path):
    """A /synth's caller hears nothing until its end: a /ws preview's first audio need not wait for it."""
    engine = PausableTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    synth = asyncio.create_task(
        client.post("/synth", json={"text": "가" * 50, "output_path": str(tmp_path / "a.wav")})
    )
    gate.allow(2)
    await wait_until(lambda: gate.passed >= 2)
    await ws_preview_behind(client, gate, engine, "가" * 50)
    assert (await (await synth).json())["status"] == "ok"
    with wave.open(str(tmp_path / "a.wav")) as written:
        assert written.getnframes() == engine.render(SynthesisRequest("가" * 50)).size  # nothing lost


async def test_a_batch_section_lending_to_nested_previews_counts_their_time_once(worker, tmp_path):
    """A /ws preview inside a paused batch section lends the engine in turn to a newer one: the batch's
    `elapsed_sec` took the inner preview's time off twice (its own 1 s of sleeps read as less)."""
    import time

    class SleepyTone(PausableTone):
        def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
            for chunk in super().stream(request):
                time.sleep(1.0 if request.text == "나" * 10 else 0.05)  # the inner preview: 2 s
                yield chunk

    engine = SleepyTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    batch = {"sections": [{"idx": 0, "text": "가" * 100, "output_path": str(tmp_path / "s0.wav")}]}
    job_id = (await (await client.post("/synth_batch?async=1", json=batch)).json())["job_id"]
    gate.allow(3)
    await wait_until(lambda: gate.passed >= 3)
    gate.allow(2)  # the next batch chunk, then the outer preview's first
    outer = await first_ws_audio(client, "다" * 50)  # inside the paused batch section, heard
    await ws_preview_behind(client, gate, engine, "다" * 50)  # the inner one, inside the outer one
    await receive_until_done(outer)
    events = client.get(f"/jobs/{job_id}/events")
    ok = next(json.loads(line) for line in (await (await events).text()).splitlines() if '"ok"' in line)
    assert ok["elapsed_sec"] >= 0.9  # its own 20 chunks slept 1 s


async def test_a_cancelled_preview_lends_the_engine_no_more_and_ends(worker):
    """A /ws preview cancelled while a newer one ran inside it went on lending the engine to the
    previews still waiting (up to 8 sections) before its `done`; it now ends after the one in flight."""
    hold = threading.Event()  # the last preview's engine call waits for it

    class HoldingTone(PausableTone):
        def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
            if request.text == "다" * 10:
                hold.wait(seconds(30))
            yield from super().stream(request)

    engine = HoldingTone(chunk_seconds=0.1)
    client, gate = await gated_worker(worker, engine)
    admission = client.app[SCHEDULER_KEY].admission
    try:
        gate.allow(2)
        lender = await first_ws_audio(client, "가" * 50)  # heard; its 3rd chunk waits for the gate
        await wait_until(lambda: engine.made.count("가" * 50) == 2)  # (lends from then on)
        waiting = []
        for text in ("나" * 10, "다" * 10):
            waiting.append(AiohttpWs(await client.ws_connect("/ws")))
            await waiting[-1].send_json({"type": "synth", "text": text, "audio": True})
            await wait_until(lambda: len(admission.live_jobs()) == len(waiting) + 1)
        gate.allow(1)  # "나" * 10 takes the engine inside the lender, at its 2nd chunk's end or 3rd's
        await wait_until(lambda: len(admission.running_jobs()) == 2)
        await lender.send_json({"type": "cancel"})
        await wait_until(lambda: admission.running_jobs()[0].cancel_requested.requested)
        gate.open()
        async with asyncio.timeout(seconds(10)):  # before: "다" * 10 ran inside it first, held here
            assert (await receive_until_done(lender)).done["cancelled"] is True
        assert "다" * 10 not in engine.made
    finally:
        hold.set()
        gate.open()
    for ws in waiting:
        assert (await receive_until_done(ws)).done["cancelled"] is False
