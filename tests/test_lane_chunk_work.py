"""What an engine lane does for each chunk of a `/ws` preview, kept to the chunk's own work
(benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53): the loaded engine's rate is not asked for again
a chunk, an engine's 1-D float32 chunk is taken as it is, and its int16 copy is clipped by ufuncs, the
same values as `np.clip`, without that function's Python dispatch."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import numpy as np
import pytest

from npu_worker import audio
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs import runner as runner_module
from npu_worker.jobs.delivery import Delivery
from npu_worker.jobs.loop_handoff import call_soon_unless_closed
from npu_worker.jobs.model import AudioChunk, Job, Section, new_job_id
from npu_worker.protocol import SynthParams
from tests.test_ws_support import batch, connect, run_request
from tests.tone_engine import ToneEngine


def reference_pcm16(samples: Any) -> np.ndarray:
    """What `to_pcm16` returned with `np.clip`."""
    scaled = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    scaled *= 32767.0
    return np.rint(scaled, out=scaled).astype(np.int16)


@pytest.mark.parametrize(
    "samples",
    [
        np.random.default_rng(7).normal(0.0, 2.0, 4096).astype(np.float32),
        np.array([np.nan, np.inf, -np.inf, -0.0, 1.0, -1.0, 1.0000001, -1.0000001, 3e38, -3e38], np.float32),
        np.random.default_rng(8).uniform(-1.5, 1.5, 512),  # float64 in
        [0.25, 2.0, -3.0],
        np.zeros(0, np.float32),
    ],
)
@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
def test_pcm16_is_byte_for_byte_what_clip_made(samples: Any) -> None:
    made, expected = audio.to_pcm16(samples), reference_pcm16(samples)
    assert made.dtype == np.int16 and made.tobytes() == expected.tobytes()


def streaming_job() -> Job:
    sections = [Section(0, "one", None), Section(1, "two", None)]
    return Job(new_job_id(), SynthParams(), sections, preview=True, stream_audio=True, pcm16_listener=True)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
def test_a_float32_chunk_goes_out_as_itself_and_its_pcm16_without_np_clip_or_asarray(monkeypatch) -> None:
    job = streaming_job()
    published: list[AudioChunk] = []
    delivery = Delivery(job, job.sections[1], 24000, lambda _job, chunk: published.append(chunk))
    assert delivery.take(np.random.default_rng(9).normal(0.0, 0.7, 2400).astype(np.float32))
    assert delivery.watch is not None and delivery.watch.onset is not None  # (it looks no more)
    published.clear()
    chunks = [np.random.default_rng(i).normal(0.0, 0.7, 480).astype(np.float32) for i in range(4)]
    chunks.append(
        np.array([np.nan, np.inf, -np.inf, -0.0, 1.0, -1.0, 1.0000001, -1.0000001, 3e38, 0.5], np.float32)
    )
    expected = [reference_pcm16(chunk) for chunk in chunks]
    clipped: list[int] = []
    real, real_asarray = np.clip, np.asarray
    monkeypatch.setattr(np, "clip", lambda *a, **k: clipped.append(1) or real(*a, **k))
    monkeypatch.setattr(np, "asarray", lambda *a, **k: clipped.append(2) or real_asarray(*a, **k))
    assert all(delivery.take(chunk) for chunk in chunks)
    monkeypatch.undo()
    assert [chunk.samples for chunk in published] == chunks  # (the same values)
    assert all(out.samples is chunk for out, chunk in zip(published, chunks, strict=True))
    assert [chunk.pcm16.tobytes() for chunk in published] == [pcm.tobytes() for pcm in expected]
    assert clipped == []


def counted_passes(monkeypatch, counted: list[str]) -> None:
    """`np.maximum`, `np.minimum` and `np.clip` counted as they are called (by name)."""
    for name in ("maximum", "minimum", "clip"):
        real = getattr(np, name)
        monkeypatch.setattr(
            np, name, lambda *a, _n=name, _real=real, **k: counted.append(_n) or _real(*a, **k)
        )


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
def test_a_chunks_pcm16_is_clipped_in_one_pass_not_by_maximum_then_minimum(monkeypatch) -> None:
    """The `clip` ufunc, one pass over a chunk: `maximum` then `minimum` with a scalar bound were two
    NaN-propagating passes, 8 % of the engine lane's CPU a `/ws` preview (SERVER_OVERHEAD.md, stop 64);
    `to_pcm16` and a wav's encoding likewise, with the same bytes."""
    job = streaming_job()
    published: list[AudioChunk] = []
    delivery = Delivery(job, job.sections[1], 24000, lambda _job, chunk: published.append(chunk))
    assert delivery.take(np.random.default_rng(9).normal(0.0, 0.7, 2400).astype(np.float32))
    assert delivery.watch is not None and delivery.watch.onset is not None  # (it looks no more)
    chunks = [np.random.default_rng(i).normal(0.0, 1.5, 480).astype(np.float32) for i in range(4)]
    chunks.append(np.array([np.nan, np.inf, -np.inf, -0.0, 1.0000001, -1.0000001, 3e38, 0.5], np.float32))
    counted: list[str] = []
    counted_passes(monkeypatch, counted)
    assert all(delivery.take(chunk) for chunk in chunks)
    pcm = [audio.to_pcm16(chunk) for chunk in chunks]
    wav = audio.wav_of_chunks(chunks, 24000)
    monkeypatch.undo()
    assert counted == []
    expected = [reference_pcm16(chunk).tobytes() for chunk in chunks]
    assert [chunk.pcm16.tobytes() for chunk in published[1:]] == expected
    assert [made.tobytes() for made in pcm] == expected
    assert wav[44:] == b"".join(expected) and wav == audio.pcm16_wav(np.concatenate(pcm), 24000)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")
def test_the_two_pass_clip_left_for_another_numpy_makes_the_same_values() -> None:
    samples = np.array(
        [np.nan, np.inf, -np.inf, -0.0, 1.0, -1.0, 1.0000001, -1.0000001, 3e38, 0.25], np.float32
    )
    low, high = np.float32(-1.0), np.float32(1.0)
    by_ufunc, by_extremes = audio.clip_samples(samples, low, high), audio.clip_by_extremes(samples, low, high)
    assert by_ufunc.tobytes() == by_extremes.tobytes() == np.clip(samples, low, high).tobytes()
    out = samples.copy()
    assert audio.clip_by_extremes(out, low, high, out=out) is out and out.tobytes() == by_ufunc.tobytes()


def test_other_chunks_are_still_made_1d_float32() -> None:
    job = streaming_job()
    published: list[AudioChunk] = []
    delivery = Delivery(job, job.sections[1], 24000, lambda _job, chunk: published.append(chunk))
    assert delivery.take(np.full((2, 3), 0.5))  # float64, 2-D
    assert delivery.take([0.25, -0.25])  # a list
    assert [chunk.samples.dtype for chunk in published] == [np.float32, np.float32]
    assert [chunk.samples.shape for chunk in published] == [(6,), (2,)]
    assert delivery.finish("key", None).duration == round(8 / 24000, 3)


async def test_a_previews_chunks_do_not_ask_the_rate_again(worker) -> None:
    asked: list[int] = []

    class Counted:
        """The loaded engine's info, its rate's reads counted."""

        def __init__(self, info: Any) -> None:
            self._info = info

        def __getattr__(self, name: str) -> Any:
            if name == "sample_rate":
                asked.append(1)
            return getattr(self._info, name)

    client = await worker(ToneEngine(chunk_seconds=0.02))  # a chunk every 20 ms of audio
    runner = client.app[SCHEDULER_KEY].runner
    runner.info = Counted(runner.info)
    ws = await connect(client)
    try:
        heard = await run_request(ws, batch("A preview of a few chunks."))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 1
    chunks = len(heard.section_pcm(0)) / (0.02 * 24000 * 2)
    assert chunks > 10  # more than ten chunks went out
    assert 1 <= len(asked) < chunks / 2  # a few reads a request (the section's, the listener's), none a chunk


def test_past_the_onset_a_first_sections_chunks_skip_the_trimmer(monkeypatch) -> None:
    job = streaming_job()
    job.trim_leading_silence = True
    published: list[AudioChunk] = []
    delivery = Delivery(job, job.sections[0], 24000, lambda _job, chunk: published.append(chunk))
    assert delivery.trimmer is not None
    fed: list[int] = []
    real = type(delivery.trimmer).feed
    monkeypatch.setattr(type(delivery.trimmer), "feed", lambda self, c: fed.append(1) or real(self, c))
    tone = (0.5 * np.sin(np.arange(2400) * 0.3)).astype(np.float32)
    chunks = [np.zeros(2400, np.float32), tone, tone.copy(), tone.copy(), tone.copy()]
    for chunk in chunks:
        assert delivery.take(chunk)
    assert delivery.trimmer.onset_in_output is not None
    assert len(fed) == 2  # the silence and the chunk that revealed the onset; not the three after
    audio = delivery.finish("key", None)
    assert audio.trimmed and published[0].onset is not None
    assert [chunk.samples is out for chunk, out in zip(published[1:], chunks[2:], strict=True)] == [True] * 3
    kept = np.concatenate(audio.kept_chunks or [])
    assert kept.size == sum(chunk.samples.size for chunk in published)
    assert np.array_equal(kept[-7200:], np.concatenate(chunks[2:]))


def test_a_chunk_asks_the_cancel_without_a_call_and_still_stops_at_it(monkeypatch) -> None:
    job = streaming_job()
    delivery = Delivery(job, job.sections[1], 24000, lambda _job, chunk: None)
    asked: list[int] = []
    real = threading.Event.is_set
    monkeypatch.setattr(threading.Event, "is_set", lambda self: asked.append(1) or real(self))
    chunk = np.full(480, 0.25, np.float32)
    assert all(delivery.take(chunk) for _ in range(5))
    assert asked == []  # `is_set` was one Python call a chunk
    cancelling = threading.Thread(target=job.cancel_requested.set)
    cancelling.start()
    cancelling.join()
    assert not delivery.take(chunk)  # the next chunk after the cancel stops the engine, as before
    monkeypatch.undo()
    assert job.cancel_requested.is_set() and job.cancel_requested.wait(0)  # an Event for its waiters
    job.cancel_requested.clear()
    assert not job.cancel_requested.requested and delivery.take(chunk)


def python_calls_of(work: Any) -> list[str]:
    """The Python functions (not builtins) that `work()` calls, in order, by name (not `work` itself)."""
    called: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return called[1:]


def test_a_chunk_past_the_onset_is_taken_and_delivered_in_one_call_of_delivery() -> None:
    job = streaming_job()
    published: list[AudioChunk] = []
    delivery = Delivery(job, job.sections[1], 24000, lambda _job, chunk: published.append(chunk))
    tone = (0.5 * np.sin(np.arange(2400) * 0.3)).astype(np.float32)
    assert delivery.take(tone) and delivery.watch is not None and delivery.watch.onset is not None
    called = python_calls_of(lambda: delivery.take(tone[:480].copy()))
    # no `feed`, `_deliver` or `is_set`, no `AudioChunk.__init__` (a Struct's, in C: stop 56), and its
    # int16 copy made inline, not by `to_pcm16` (stop 58)
    assert called == ["take", "<lambda>"]
    assert published[-1].samples.size == 480 and published[-1].onset is None


async def test_a_previews_chunks_past_the_urgent_bound_go_to_the_later_window_without_hand_over_audio(
    worker, monkeypatch
) -> None:
    client = await worker(ToneEngine(chunk_seconds=0.1))  # 2 s of audio in 0.1 s chunks
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    handed: list[bool] = []
    later: list[int] = []
    real_hand_over, waiting = runner_module.Runner.hand_over_audio, handoff.later

    def hand_over(self: Any, job: Job, chunk: AudioChunk, urgent: bool = True) -> None:
        handed.append(urgent)
        real_hand_over(self, job, chunk, urgent)

    def call_later(callback: Any, argument: Any, within: float) -> None:
        later.append(argument.samples.size)
        waiting(callback, argument, within)

    monkeypatch.setattr(runner_module.Runner, "hand_over_audio", hand_over)
    monkeypatch.setattr(handoff, "later", call_later)
    ws = await connect(client)
    try:
        heard = await run_request(ws, batch("가" * 100))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 1 and len(heard.section_pcm(0)) == 2 * 48000  # nothing lost
    assert handed and all(handed)  # only the urgent chunks through `hand_over_audio`, a call each
    assert len(later) == 20 - len(handed) and sum(later) == 48000 - 2400 * len(handed)


def test_a_lanes_wake_up_of_the_loop_is_asyncios_call_alone_and_nothing_once_it_closed() -> None:
    loop = asyncio.new_event_loop()
    try:
        called = python_calls_of(lambda: call_soon_unless_closed(loop, print, "woken"))
        assert called[:2] == ["call_soon_unless_closed", "call_soon_threadsafe"]  # no `suppress` around it
    finally:
        loop.close()
    call_soon_unless_closed(loop, print, "late")  # a closed loop: nothing, and no RuntimeError


class TappingRunner(runner_module.Runner):
    """A runner that hands its audio over somewhere of its own (as the cluster runner sends it to
    Redis), here a list beside the loop's listeners: it says nothing of `hands_over_to_loop`."""

    tapped: list[int]

    def hand_over_audio(self, job: Job, chunk: AudioChunk, urgent: bool = True) -> None:
        self.tapped.append(int(chunk.samples.size))
        super().hand_over_audio(job, chunk, urgent)


async def test_a_runner_with_its_own_hand_over_gets_every_chunk_not_only_the_urgent_ones(worker) -> None:
    client = await worker(ToneEngine(chunk_seconds=0.1))  # 2 s of audio in 0.1 s chunks
    runner = client.app[SCHEDULER_KEY].runner
    runner.__class__, runner.tapped = TappingRunner, []
    ws = await connect(client)
    try:
        heard = await run_request(ws, batch("가" * 100))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 1 and len(heard.section_pcm(0)) == 2 * 48000
    assert runner.tapped == [2400] * 20  # past the first 0.5 s too (they went around it, unseen)
    assert runner_module.Runner.hands_over_to_loop and not TappingRunner.hands_over_to_loop
