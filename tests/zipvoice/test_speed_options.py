"""The speed options: segment length from the decoder's cost curve, first-segment steps, edge trim."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

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
def test_a_text_is_split_only_when_equal_parts_cost_less_than_one_segment(precision):
    model = cost.MEASURED[precision]
    counts = [cost.segment_count(precision, 323, frames, 1700) for frames in range(50, 6000, 50)]
    assert counts == sorted(counts) and counts[0] == 1
    for frames, k in zip(range(50, 6000, 50), counts, strict=True):
        assert frames / k <= 1700
        if k > 1 and frames <= 1700:  # a split is only taken when it is cheaper than one segment
            assert k * model.call_seconds(323 + frames / k) < model.call_seconds(323 + frames)


def test_int8_splits_a_long_text_in_two_where_one_segment_was_the_old_18_s():
    assert cost.segment_count("int8", 323, 940, 1700) == 1  # a ≈ 10 s slide stays whole
    assert cost.segment_count("int8", 323, 1690, 1700) == 2  # 18 s: two 9 s segments are cheaper


@pytest.fixture(scope="module")
def engine(tiny_model_dir, tmp_path_factory) -> Iterator[ZipVoiceEngine]:
    engine = ZipVoiceEngine(engine_config(tiny_model_dir, tmp_path_factory.mktemp("state")))
    engine.load()
    yield engine
    engine.close()  # and its espeak child (else left running to the session's end)


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
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    rate = prompts.frames_per_token
    auto = engine.plan(LONG, "ko", prompts.rest, 1.0, False, rate)
    tokens = sum(len(engine._token_ids(s, "ko")) for s in auto)
    frames_per_second = engine.info.sample_rate / engine.spectrum.hop_length
    longest = cost.MAX_SEGMENT_SECONDS * frames_per_second
    expected = cost.segment_count("fp32", prompts.rest.frames, tokens * rate, longest)
    assert expected >= 2 and len(auto) in (expected, expected + 1)
    fixed = with_options(engine, segment_seconds=4.0).plan(LONG, "ko", prompts.rest, 1.0, False, rate)
    assert len(fixed) > len(auto)


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
