"""The ZipVoice engine with `fixed_shapes` (decoder buckets) on the CPU: the bucketed decoder it loads,
segments planned to fit its largest bucket, the overflow decoder's log and counts.

Split from test_buckets.py (the sessions and sampling runs on the real structure) so that the two run
on separate test workers; each engine load specialises its buckets, most of a test's time.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.zipvoice import decoders, runtime
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config


@pytest.fixture(scope="module")
def fixed_shape_engine(
    tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ZipVoiceEngine]:
    """One engine with `fixed_shapes` and buckets 255 and 511 for the module: opening its bucket
    sessions is most of a test's time, and a request only reads them (its traces are its own)."""
    config = engine_config(tiny_model_dir, tmp_path_factory.mktemp("fixed-state"), fixed_shapes=True)
    engine = ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=(255, 511))))
    engine.load()
    yield engine
    engine.close()  # and its espeak child (else left running to the session's end)


def test_engine_with_fixed_shapes_runs_the_bucketed_decoder_on_cpu(fixed_shape_engine):
    engine = fixed_shape_engine
    assert engine.info.device == "cpu"
    decoder = engine.models.decoder
    assert isinstance(decoder, runtime.BucketedDecoder) and decoder.buckets == [255, 511]
    audio = np.concatenate(
        list(engine.stream(SynthesisRequest("안녕하세요. 오늘은 배터리를 봅니다.", seed=3)))
    )
    assert audio.size > 0 and np.isfinite(audio).all()
    assert engine.traces
    for trace in engine.traces:  # every segment generated at a length that pads only in front
        size = decoder.bucket_for(trace.frames)
        assert size is not None and (size - trace.frames) % decoders.PHASE == 0


def test_an_unknown_qnn_target_is_a_model_load_error(tiny_model_dir, tmp_path):
    engine = ZipVoiceEngine(engine_config(tiny_model_dir, tmp_path, qnn_soc="sm9999"))
    with pytest.raises(ModelLoadError, match="unknown --qnn-soc 'sm9999'"):
        engine.load()


def test_no_segment_outgrows_the_largest_bucket_when_the_buckets_are_fewer(fixed_shape_engine):
    """With fewer or smaller buckets than the default (prepare --buckets, as the NPU-memory error
    advises) the planner still cut segments for 18 s, so every longer one ran on the CPU's overflow
    decoder behind the caller's back: a segment plus its prompt must fit the largest bucket."""
    engine = fixed_shape_engine
    decoder = engine.models.decoder
    assert isinstance(decoder, runtime.BucketedDecoder)
    text = " ".join(["오늘은 배터리의 구조와 원리를 차례로 살펴보고 그 특성을 정리합니다."] * 4)
    for _ in engine.stream(SynthesisRequest(text, seed=1, early_audio=False)):
        pass
    assert len(engine.traces) > 1
    assert all(decoder.bucket_for(trace.frames) is not None for trace in engine.traces), [
        trace.frames for trace in engine.traces
    ]


def test_a_prompt_that_leaves_the_largest_bucket_a_few_frames_plans_segments_of_the_usual_length(
    fixed_shape_engine,
):
    """A prompt 20 frames short of the largest bucket (0.2 s of room) bounded every segment to
    20 / frames-per-token tokens: one 26-syllable sentence became 29 segments of one syllable, each
    a decoder call of the whole bucket and a cross-fade. Less room than the shortest segment the
    planner makes (0.8 s) is no room: the segments keep their length (the overflow decoder runs them)."""
    engine = fixed_shape_engine
    largest = engine.models.decoder.buckets[-1]
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    text = "오늘은 배터리의 구조와 원리를 차례로 살펴보고 그 특성을 정리합니다."

    def plan(room: int) -> list[str]:
        features = np.zeros((largest - room, prompts.rest.features.shape[1]), dtype=np.float32)
        prompt = dataclasses.replace(prompts.rest, features=features)
        return engine.plan(text, "ko", prompt, 1.0, early=False, frames_per_token=prompts.frames_per_token)

    assert plan(20) == [text]
    hop = engine.spectrum.hop_length / engine.info.sample_rate
    room = int(2 * engine.options.first_segment_min_seconds / hop)  # room for short segments: kept
    assert 1 < len(plan(room)) < 10  # (the sentence's frames are more than that room)


def test_a_prompt_that_fills_the_largest_bucket_is_logged_once(tiny_model_dir, tmp_path, caplog):
    """Every segment of such a prompt runs on the CPU overflow decoder while /health names the NPU."""
    config = engine_config(tiny_model_dir, tmp_path, fixed_shapes=True)
    engine = ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=(63,))))
    engine.load()
    caplog.set_level(logging.WARNING)
    try:
        for text in ("안녕하세요.", "오늘은 배터리를 봅니다."):
            for _ in engine.stream(SynthesisRequest(text, seed=1, early_audio=False)):
                pass
    finally:
        engine.close()
    said = [r.getMessage() for r in caplog.records if "room in the largest decoder bucket" in r.getMessage()]
    assert len(said) == 1 and "(63)" in said[0], said


def test_segments_that_fit_a_bucket_count_as_decoder_calls_none_on_the_cpu_overflow(fixed_shape_engine):
    """/health's `decoder_calls`: the overflow share counts only calls past the largest bucket."""
    engine = fixed_shape_engine
    before = engine.decoder_calls
    for _ in engine.stream(SynthesisRequest("안녕하세요.", seed=2, early_audio=False)):
        pass
    after = engine.decoder_calls
    assert after.total > before.total and after.cpu_overflow == before.cpu_overflow == 0, (before, after)
