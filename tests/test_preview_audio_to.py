"""A preview's audio goes from the engine lane straight to its one listener (`Job.audio_to`), not through
`Job.publish_audio`'s Python call and copy of the job's listeners a chunk on the event loop (issue 25,
benchmarks/SERVER_OVERHEAD.md, stop 60): the same frames, and nothing for a listener past its end."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.model import AudioChunk, Job, new_job_id
from npu_worker.jobs.subscription import AudioBudget, Subscription
from npu_worker.protocol import SynthParams
from tests.test_ws_support import batch, connect, run_request
from tests.timing import until
from tests.tone_engine import ToneEngine


async def test_a_previews_chunks_reach_its_socket_without_publish_audio(worker, monkeypatch) -> None:
    engine = ToneEngine(chunk_seconds=0.05)  # 2.4 s of audio in 48 chunks: urgent ones, then later ones
    client = await worker(engine)
    published: list[int] = []
    publish_audio = Job.publish_audio

    def counted(job: Job, chunk: AudioChunk) -> None:
        published.append(chunk.idx)
        publish_audio(job, chunk)

    monkeypatch.setattr(Job, "publish_audio", counted)
    ws = await connect(client)
    try:
        transcript = await run_request(ws, batch("가" * 120))
        again = await run_request(ws, batch("가" * 120))
    finally:
        await ws.close()
    assert published == []  # (each chunk went through it before)
    end = transcript.events("audio_end")[0]
    assert end["samples"] == len(transcript.section_pcm(0)) // 2 > 24000  # past the urgent half second
    assert transcript.section_pcm(0) == again.section_pcm(0)  # the same frames each time
    assert transcript.done["ok_count"] == 1 and transcript.events("error") == []


def test_a_finished_listener_takes_no_audio_past_its_end() -> None:
    """A shutdown's `finish` detached the listener, so `publish_audio` gave it no more audio; a chunk
    handed to it directly after its end sat behind that end, counted in the budget for good."""
    job = Job(new_job_id(), SynthParams(), [], preview=True, persisted=False, stream_audio=True)
    budget = AudioBudget(10**9)
    listener = Subscription(job, audio=True, budget=budget)
    chunk = AudioChunk(0, np.zeros(480, np.float32))
    listener.push_audio(chunk)
    listener.finish()
    listener.push_audio(chunk)
    assert (listener.buffered_samples, budget.samples) == (480, 480)  # the chunk before the end only
    assert listener.ready() is chunk and listener.ready() is None and listener.holds()
    assert (listener.buffered_samples, budget.samples) == (0, 0)


async def test_a_finished_previews_job_is_freed_without_a_cyclic_collection(worker) -> None:
    """`Job.audio_to` (its listener's `push_audio`) and the listener's `job` held each other: every finished
    `/ws` preview's job (its texts, its log, its listener) lived on until a cyclic collection, one of the
    oldest generation once promoted while it ran. Its listener's end lets `audio_to` go."""
    client = await worker(ToneEngine(chunk_seconds=0.05))
    scheduler = client.app[SCHEDULER_KEY]
    made: list[weakref.ref[Job]] = []
    submit = scheduler.submit

    async def recorded(*arguments: Any, **options: Any) -> Job:
        job = await submit(*arguments, **options)
        made.append(weakref.ref(job))
        return job

    scheduler.submit = recorded
    ws = await connect(client)
    gc.disable()  # (freed by reference counts alone, or not at all)
    try:
        first = await run_request(ws, batch("가" * 40))
        second = await run_request(ws, batch("가" * 40))
        assert first.done["ok_count"] == second.done["ok_count"] == 1 and len(made) == 2
        await until(lambda: made[0]() is None, "the first preview's job to be freed")
    finally:
        gc.enable()
        await ws.close()
