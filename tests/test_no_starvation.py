"""Previews go first, but not for ever: under a flood of previews (`/synth` from several callers) a
batch still gets a section every `PASSED_OVER_LIMIT` sections, and one batch section pauses for at most
that many preview sections (engines that can pause), so the batch ends within a bounded factor.

Before this, three callers posting `/synth` in a loop to a ZipVoice worker kept a 39-section batch at
`queued`, 0 of 39, for as long as they went on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.admission import PASSED_OVER_LIMIT
from tests.test_preemption import PausableTone
from tests.test_ws_support import ChunkGate
from tests.timing import until
from tests.tone_engine import ToneEngine

PREVIEWS = PASSED_OVER_LIMIT + 4
PREVIEW_TEXTS = [chr(0xB098 + i) * 5 for i in range(PREVIEWS)]  # one chunk each, none alike


async def flood(client: Any, gate: ChunkGate, tmp_path: Any, jobs_before: int) -> None:
    """Queue PREVIEWS `/synth` previews while the gate holds the engine, then let everything run.
    Queued means enqueued (a live job): `queue_size` counts a preview's sections from its reservation,
    before its enqueue, and one enqueued after the gate opened ran after the batch."""
    scheduler = client.app[SCHEDULER_KEY]
    previews = [
        asyncio.create_task(
            client.post("/synth", json={"text": text, "output_path": str(tmp_path / f"p{i}.wav")})
        )
        for i, text in enumerate(PREVIEW_TEXTS)
    ]
    await until(lambda: len(scheduler.admission.live_jobs()) == jobs_before + PREVIEWS, "the previews queued")
    gate.open()
    for answer in await asyncio.gather(*previews):
        assert (await answer.json())["status"] == "ok"


async def batch_ended(client: Any, job_id: str) -> None:
    async def done() -> bool:
        return (await (await client.get(f"/jobs/{job_id}/status")).json())["status"] == "done"

    for _ in range(1000):
        if await done():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the batch did not end")


async def test_a_waiting_batch_goes_next_once_passed_over_by_the_limit(worker, tmp_path):
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    first = asyncio.create_task(
        client.post("/synth", json={"text": "가" * 5, "output_path": str(tmp_path / "first.wav")})
    )
    await until(lambda: engine.calls == ["가" * 5], "the first /synth holding the engine")
    sections = [{"idx": 0, "text": "배" * 5}, {"idx": 1, "text": "밤" * 5}]
    job_id = (await (await client.post("/synth_batch?async=1", json={"sections": sections})).json())["job_id"]
    await flood(client, gate, tmp_path, jobs_before=2)  # the first /synth, the batch
    assert (await (await first).json())["status"] == "ok"
    await batch_ended(client, job_id)
    # before: all the previews, then the batch; now the batch's first section after PASSED_OVER_LIMIT
    assert engine.calls.index("배" * 5) == 1 + PASSED_OVER_LIMIT
    assert engine.calls[-1] == "밤" * 5
    assert sorted(text for text in engine.calls[1:-1] if text != "배" * 5) == sorted(PREVIEW_TEXTS)


async def test_a_batch_section_pauses_for_at_most_the_limit_of_preview_sections(worker, tmp_path):
    engine = PausableTone(chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    long_text = "가" * 100  # 20 chunks
    sections = [{"idx": 0, "text": long_text}]
    job_id = (await (await client.post("/synth_batch?async=1", json={"sections": sections})).json())["job_id"]
    gate.allow(2)
    await until(lambda: gate.passed >= 2, "two chunks of the batch section")
    await flood(client, gate, tmp_path, jobs_before=1)
    await batch_ended(client, job_id)
    last_batch_chunk = len(engine.made) - 1 - engine.made[::-1].index(long_text)
    inside = {text for text in engine.made[:last_batch_chunk] if text != long_text}
    assert len(inside) == PASSED_OVER_LIMIT  # before: every one of them ran inside the paused section
    assert engine.made.count(long_text) == 20 and set(engine.made) == {long_text, *PREVIEW_TEXTS}
