"""A listen-only section's chunks are counted, not kept (benchmarks/SERVER_OVERHEAD.md, stop 55): a `/ws`
preview's audio goes to its listener and nowhere else (no file, not cached), and keeping every chunk
(and every trimmed one) to the section's end was two `list.append` calls a chunk on the engine lane.
What listeners get, the onset, the trim and the `ok`'s duration stay the same."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from npu_worker.audio import wav_bytes
from npu_worker.jobs import runner as runner_module
from npu_worker.jobs.delivery import Delivery
from npu_worker.jobs.model import AudioChunk, Job, Section, new_job_id
from npu_worker.protocol import SynthParams
from tests.call_counting import c_calls_of
from tests.test_ws_support import batch, connect, run_request
from tests.tone_engine import ToneEngine


def preview() -> Job:
    sections = [Section(0, "one", None), Section(1, "two", None)]
    job = Job(new_job_id(), SynthParams(), sections, preview=True, stream_audio=True, pcm16_listener=True)
    job.trim_leading_silence = True
    return job


def delivered(chunks: list[np.ndarray], keeps: bool) -> tuple[list[AudioChunk], Any, list[list[str]]]:
    """What a first section's `Delivery` handed on, what it made, and the builtins each `take` called."""
    job = preview()
    published: list[AudioChunk] = []
    delivery = Delivery(job, job.sections[0], 24000, lambda _job, c: published.extend((c,)), keeps)
    calls = [c_calls_of(lambda c=c: delivery.take(c)) for c in chunks]
    return published, delivery.finish("key", None), calls


def test_an_unkept_section_hands_on_the_same_chunks_and_duration_and_appends_nothing() -> None:
    tone = (0.5 * np.sin(np.arange(2400) * 0.3)).astype(np.float32)
    chunks = [np.zeros(2400, np.float32), np.zeros(0, np.float32), tone, tone.copy(), tone[:700].copy()]
    made = {keeps: delivered(chunks, keeps) for keeps in (True, False)}
    (kept_out, kept, kept_calls), (out, unkept, calls) = made[True], made[False]
    assert [(c.idx, c.onset, c.samples.tobytes(), c.pcm16.tobytes()) for c in out] == [
        (c.idx, c.onset, c.samples.tobytes(), c.pcm16.tobytes()) for c in kept_out
    ]
    assert any(c.onset is not None for c in out) and unkept.trimmed == kept.trimmed is True
    assert unkept.duration == kept.duration == round(sum(c.samples.size for c in out) / 24000, 3)
    assert (
        unkept.heard == kept.heard == sum(c.samples.size for c in out)
    )  # (exact: a rounded duration hides a few)
    assert [c.count("append") for c in kept_calls] == [1, 0, 2, 2, 2]  # (the silence: held by the trimmer)
    assert [c.count("append") for c in calls] == [0, 0, 0, 0, 0]
    assert unkept.raw_chunks == [] and unkept.kept_chunks == []


def test_a_silent_first_sections_held_back_tail_is_counted_when_it_goes_out() -> None:
    """No onset: the trimmer holds the section back and `finish` hands it on in one piece (`_deliver`)."""
    quiet = [np.zeros(2400, np.float32), np.full(2400, 1e-6, np.float32), np.zeros(1200, np.float32)]
    (kept_out, kept, _), (out, unkept, _) = (delivered(quiet, keeps) for keeps in (True, False))
    assert [c.samples.tobytes() for c in out] == [c.samples.tobytes() for c in kept_out] and len(out) == 1
    assert 0 < unkept.heard == kept.heard == out[0].samples.size
    assert unkept.duration == kept.duration == round(out[0].samples.size / 24000, 3) > 0


def test_an_unkept_sections_wav_is_refused_not_written_empty() -> None:
    """A reader that `keeps` forgot (a file, the cache) got a wav of no samples while the listener heard the
    section whole; now it fails loudly (the section's `error`). A cache hit's wav is the hit's bytes still."""
    tone = (0.5 * np.sin(np.arange(4800) * 0.3)).astype(np.float32)
    for first in (True, False):  # (trimmed, with kept_chunks; untrimmed, raw_chunks only)
        job = preview()
        section = job.sections[0 if first else 1]
        delivery = Delivery(job, section, 24000, lambda _job, _c: None, False)
        for chunk in (np.zeros(2400, np.float32), tone) if first else (tone,):
            delivery.take(chunk)
        made = delivery.finish("key", None)
        assert made.trimmed is first and 0 < made.heard <= tone.size + 2400
        with pytest.raises(RuntimeError, match="not kept"):
            made.file_wav()
        with pytest.raises(RuntimeError, match="not kept"):
            made.raw_wav  # noqa: B018 - the property is the call
    hit = wav_bytes(tone, 24000)
    delivery = Delivery(preview(), Section(1, "two", None), 24000, lambda _job, _c: None, False)
    delivery.take(tone)
    assert delivery.finish("key", hit).file_wav() == hit


async def test_a_ws_preview_is_unkept_and_its_ok_says_the_duration_heard(worker, monkeypatch) -> None:
    kept: list[bool] = []

    class Recorded(Delivery):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            kept.append(self.keeps)

    monkeypatch.setattr(runner_module, "Delivery", Recorded)
    client = await worker(ToneEngine(chunk_seconds=0.05))
    ws = await connect(client)
    try:
        heard = await run_request(ws, batch("A preview of a few chunks.", "And a second section."))
    finally:
        await ws.close()
    assert heard.done["ok_count"] == 2 and kept == [False, False]
    oks = [event for event in heard.events("progress") if event["status"] == "ok"]
    assert [ok["idx"] for ok in oks] == [0, 1]  # (an `ok` is a `progress` event: none was ever checked)
    for ok in oks:
        assert ok["duration_sec"] == round(len(heard.section_pcm(ok["idx"])) / 2 / 24000, 3) > 0
