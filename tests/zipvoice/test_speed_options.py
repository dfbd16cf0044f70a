"""The speed options: segment length from the decoder's cost curve, first-segment steps, edge trim."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.zipvoice import cost
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.engine.zipvoice.features import chunk_levels_db
from npu_worker.engine.zipvoice.joiner import StreamJoiner
from tests.zipvoice.conftest import engine_config

LONG = " ".join(
    f"{n}번째 문장에서는 리튬 이온이 양극에서 음극으로 이동하는 과정을 자세히 설명합니다."
    for n in range(1, 9)
)


@pytest.mark.parametrize("precision", ["int8", "fp32"])
@pytest.mark.parametrize("prompt_frames", [0, 117, 323, 600])
def test_best_frames_is_the_minimum_of_the_cost_per_generated_frame(precision, prompt_frames):
    model = cost.MEASURED[precision]
    grid = np.arange(10, 6000, dtype=np.float64)
    brute = grid[np.argmin([model.per_generated_frame(prompt_frames, n) for n in grid])]
    assert abs(model.best_frames(prompt_frames) - brute) <= 1.0


def test_a_longer_prompt_makes_longer_segments_cheapest_within_the_bounds():
    lengths = [cost.segment_seconds("int8", p, 93.75) for p in (0, 117, 323, 1000, 5000)]
    assert lengths == sorted(lengths)
    assert lengths[0] == cost.MIN_SEGMENT_SECONDS and lengths[-1] == cost.MAX_SEGMENT_SECONDS


@pytest.fixture(scope="module")
def engine(tiny_model_dir, tmp_path_factory) -> ZipVoiceEngine:
    engine = ZipVoiceEngine(engine_config(tiny_model_dir, tmp_path_factory.mktemp("state")))
    engine.load()
    return engine


def with_options(engine: ZipVoiceEngine, **changes: object) -> ZipVoiceEngine:
    """A second engine sharing the loaded models, with other options."""
    other = ZipVoiceEngine(
        dataclasses.replace(engine.config, options=dataclasses.replace(engine.options, **changes))
    )
    other.__dict__.update(
        {k: v for k, v in engine.__dict__.items() if k not in ("config", "options", "traces")}
    )
    other.traces = []
    return other


def test_segments_follow_the_cost_curve_unless_a_length_is_set(engine):
    prompt = engine.prompts.get(engine.default_voice(), "ko").rest
    auto = engine.segment_seconds(prompt)
    fps = engine.info.sample_rate / engine.spectrum.hop_length
    assert auto == pytest.approx(cost.segment_seconds("fp32", prompt.frames, fps))
    assert with_options(engine, segment_seconds=5.0).segment_seconds(prompt) == 5.0
    short = with_options(engine, segment_seconds=4.0).plan(LONG, "ko", prompt, 1.0, early=False)
    longer = engine.plan(LONG, "ko", prompt, 1.0, early=False)
    assert len(short) > len(longer) >= 1


def test_fewer_steps_for_the_first_segment_only(engine):
    quick = with_options(engine, first_segment_steps=2)
    list(quick.stream(SynthesisRequest("안녕하세요. 오늘은 배터리를 봅니다.", seed=1)))
    assert [len(t.step_seconds) for t in quick.traces] == [2] + [engine.num_steps] * (len(quick.traces) - 1)
    list(quick.stream(SynthesisRequest("안녕하세요. 오늘은 배터리를 봅니다.", seed=1, early_audio=False)))
    assert all(len(t.step_seconds) == engine.num_steps for t in quick.traces)


def test_edge_trim_can_be_turned_off():
    rate = 24000
    quiet = np.zeros(rate // 2, dtype=np.float32)
    tone = 0.3 * np.sin(np.arange(rate) * 2 * np.pi * 220 / rate).astype(np.float32)
    audio = np.concatenate([quiet, tone, quiet])
    outputs = {}
    for trim in (True, False):
        joiner = StreamJoiner(rate, trim=trim)
        joiner.start_segment()
        outputs[trim] = np.concatenate([joiner.feed(audio), joiner.finish()])
    assert outputs[False].size == audio.size and np.array_equal(outputs[False], audio)
    assert outputs[True].size < audio.size - rate // 2
    assert chunk_levels_db(outputs[True][:240], rate)[0] > chunk_levels_db(audio[:240], rate)[0]
