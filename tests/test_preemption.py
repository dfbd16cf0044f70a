"""A preview that arrives while a batch section runs takes the engine at the next step boundary; the
batch section is paused with its state and resumed after, losing nothing (engines that can pause)."""

from __future__ import annotations

import asyncio
import wave
from collections.abc import Iterator

import numpy as np

from npu_worker.engine.base import SynthesisRequest
from tests.test_ws_support import ChunkGate
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


async def test_a_preview_runs_inside_a_paused_batch_section_which_then_loses_nothing(worker, tmp_path):
    engine = PausableTone(chunk_seconds=0.1)
    gate = ChunkGate()
    engine.gate = gate
    client = await worker(engine)
    long_text, preview_text = "가" * 100, "나" * 10  # 20 chunks; 2 chunks
    batch = {"sections": [{"idx": 0, "text": long_text, "output_path": str(tmp_path / "s0.wav")}]}
    job = await (await client.post("/synth_batch?async=1", json=batch)).json()
    gate.allow(3)
    await wait_until(lambda: gate.passed >= 3)  # the batch section is running
    preview = asyncio.create_task(
        client.post("/synth", json={"text": preview_text, "output_path": str(tmp_path / "p.wav")})
    )
    await asyncio.sleep(0.2)  # the preview is queued
    gate.open()
    answer = await (await preview).json()
    assert answer["status"] == "ok"
    await wait_until(lambda: engine.made.count(long_text) == 20)
    first_preview = engine.made.index(preview_text)
    assert 3 <= first_preview < 20  # inside the batch section, at a chunk boundary
    assert engine.made[first_preview : first_preview + 2] == [preview_text] * 2
    status = await (await client.get(f"/jobs/{job['job_id']}/status")).json()
    await wait_until(lambda: (tmp_path / "s0.wav").exists())
    with wave.open(str(tmp_path / "s0.wav")) as written:
        samples = np.frombuffer(written.readframes(written.getnframes()), dtype=np.int16)
    expected = engine.render(SynthesisRequest(long_text))
    assert samples.size == expected.size  # nothing lost or doubled at the pause
    assert status["job_id"] == job["job_id"]


async def test_a_preview_never_pauses_another_preview(worker, tmp_path):
    engine = PausableTone(chunk_seconds=0.1)
    gate = ChunkGate()
    engine.gate = gate
    client = await worker(engine)
    first = asyncio.create_task(
        client.post("/synth", json={"text": "가" * 50, "output_path": str(tmp_path / "a.wav")})
    )
    gate.allow(2)
    await wait_until(lambda: gate.passed >= 2)
    second = asyncio.create_task(
        client.post("/synth", json={"text": "나" * 10, "output_path": str(tmp_path / "b.wav")})
    )
    await asyncio.sleep(0.2)
    gate.open()
    assert (await (await first).json())["status"] == "ok"
    assert (await (await second).json())["status"] == "ok"
    assert engine.made == ["가" * 50] * 10 + ["나" * 10] * 2


class UnpausableTone(PausableTone):
    preemptible = False


async def test_an_engine_that_cannot_pause_finishes_its_section_first(worker, tmp_path):
    engine = UnpausableTone(chunk_seconds=0.1)
    gate = ChunkGate()
    engine.gate = gate
    client = await worker(engine)
    batch = {"sections": [{"idx": 0, "text": "가" * 50, "output_path": str(tmp_path / "s0.wav")}]}
    await client.post("/synth_batch?async=1", json=batch)
    gate.allow(2)
    await wait_until(lambda: gate.passed >= 2)
    preview = asyncio.create_task(
        client.post("/synth", json={"text": "나" * 10, "output_path": str(tmp_path / "p.wav")})
    )
    await asyncio.sleep(0.2)
    gate.open()
    assert (await (await preview).json())["status"] == "ok"
    assert engine.made == ["가" * 50] * 10 + ["나" * 10] * 2  # espeak and sovits keep this behaviour
