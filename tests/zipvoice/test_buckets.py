"""Fixed-shape decoder buckets on the real ZipVoice structure (Zipformer stacks with 2x/4x downsampling).

Runs on CPU every time: fixed-shape sessions at odd and even lengths against the dynamic session,
the bucketed decoder over every bucket, the padding bound, and the engine with `fixed_shapes`.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from npu_worker.engine import providers
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice import decoders, runtime, sampler
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.protocol import ModelLoadError
from tests.zipvoice.conftest import engine_config

CONFIG = RuntimeConfig(threads=1)
BUCKETS = (63, 127)
PRECISIONS = ["fp32", "int8"]


def decoder_path(model_dir: Path, precision: str) -> Path:
    return model_dir / ("fm_decoder.onnx" if precision == "fp32" else "fm_decoder_int8.onnx")


@functools.cache
def dynamic_session(path: Path) -> Any:
    """One dynamic CPU session per decoder file for the module (a session is read-only to run)."""
    return providers.open_session(path, "cpu", CONFIG)


def decoder_inputs(frames: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x, text = (rng.standard_normal((1, frames, 100), dtype=np.float32) for _ in range(2))
    speech = np.zeros((1, frames, 100), np.float32)
    speech[:, : frames // 3] = 0.1 * rng.standard_normal((1, frames // 3, 100), dtype=np.float32)
    return x, text, speech


def relative_l2(reference: np.ndarray, other: np.ndarray) -> float:
    return float(np.linalg.norm(other - reference) / np.linalg.norm(reference))


def test_expand_to_zero_rows_stays_empty_in_fixed_shape_sessions(tmp_path):
    """The root cause in miniature: onnxruntime's ExpandElimination removes an Expand whose constant
    target has a 0 where the input has 1, so concatenating "zero pad rows" adds one row."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Slice", ["x", "start", "end"], ["last"]),
        helper.make_node("Expand", ["last", "pad_shape"], ["pad"]),
        helper.make_node("Concat", ["x", "pad"], ["y"], axis=0),
    ]
    initializers = [
        helper.make_tensor("start", TensorProto.INT64, [1], [-1]),
        helper.make_tensor("end", TensorProto.INT64, [1], [2**62]),
        helper.make_tensor("pad_shape", TensorProto.INT64, [3], [0, 1, 4]),
    ]
    graph = helper.make_graph(nodes, "zero_pad", [x], [y], initializers)
    path = tmp_path / "zero_pad.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    feed = {"x": np.ones((6, 1, 4), np.float32)}
    import onnxruntime as ort

    plain = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert plain.run(None, feed)[0].shape == (7, 1, 4)  # the upstream bug this module works around
    fixed = providers.open_session(path, "cpu", CONFIG, {"T": 6})
    assert fixed.run(None, feed)[0].shape == (6, 1, 4)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("frames", [63, 64, 256])
def test_fixed_shape_session_equals_the_dynamic_one_at_odd_and_even_lengths(
    real_structure_dir, precision, frames
):
    path = decoder_path(real_structure_dir, precision)
    fixed = runtime.Decoder(providers.open_session(path, "cpu", CONFIG, {"N": 1, "T": frames}), 3.0)
    dynamic = runtime.Decoder(dynamic_session(path), 3.0)
    inputs = decoder_inputs(frames)
    assert relative_l2(dynamic(0.3, *inputs), fixed(0.3, *inputs)) < 1e-5


@pytest.mark.parametrize("precision", PRECISIONS)
def test_bucketed_decoder_runs_every_bucket_at_odd_and_even_lengths(real_structure_dir, precision):
    path = decoder_path(real_structure_dir, precision)
    bucketed = runtime.open_bucketed_decoder(path, "cpu", CONFIG, BUCKETS)
    bucketed.set_guidance_scale(3.0)
    dynamic = runtime.Decoder(dynamic_session(path), 3.0)
    for frames in (40, 41, 62, 63, 100, 101, 127, 128, 131):
        aligned = bucketed.aligned_frames(frames)
        size = bucketed.bucket_for(aligned)
        assert size is None or (size - aligned) % decoders.PHASE == 0
        inputs = decoder_inputs(aligned)
        out = bucketed(0.4, *inputs)
        assert out.shape == (1, aligned, 100)
        assert relative_l2(dynamic(0.4, *inputs), out) < 0.02  # one call, pad ≤ 87 frames in front


def test_padding_puts_multiples_of_the_phase_in_front_and_the_rest_behind():
    assert decoders.padding(100, 127) == (24, 3)
    assert decoders.padding(127, 127) == (0, 0)
    assert decoders.padding(123, 127, phase=1) == (0, 4)
    values = np.arange(5, dtype=np.float32).reshape(1, 5, 1)
    padded = decoders.pad_frames(values, 8, 2)
    assert padded[0, :, 0].tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 0, 1, 2, 3, 4, 4, 4]


@pytest.mark.parametrize("buckets", [(64, 127), (), (0,), (383, decoders.MAX_BUCKET + 2), (999999999,)])
def test_even_empty_or_too_large_buckets_are_refused(buckets):
    """999999999 frames went on to the specialiser, which allocated its zero input: out of memory."""
    with pytest.raises(ModelLoadError, match=f"odd positive frame counts up to {decoders.MAX_BUCKET}"):
        decoders.check_buckets(buckets)
    assert decoders.check_buckets((decoders.MAX_BUCKET, 383)) == (383, decoders.MAX_BUCKET)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_padding_to_a_bucket_changes_the_final_mel_by_at_most_half_a_percent(real_structure_dir, precision):
    """Whole sampling runs at lecture-like lengths (prompt 117 or 323 frames), default buckets."""
    path = decoder_path(real_structure_dir, precision)
    session = dynamic_session(path)
    dynamic = runtime.Decoder(session, 3.0)
    bucketed = runtime.BucketedDecoder(dict.fromkeys(decoders.DEFAULT_BUCKETS, session), None, 3.0)
    rng = np.random.default_rng(1)
    for prompt_frames, frames in ((117, 234), (323, 621), (323, 904)):
        aligned = bucketed.aligned_frames(frames)
        assert aligned - frames < decoders.PHASE
        text = rng.standard_normal((1, aligned, 100), dtype=np.float32)
        prompt = 0.1 * rng.standard_normal((prompt_frames, 100), dtype=np.float32)
        reference = sampler.euler_sample(dynamic, text, prompt, 8, seed=0)
        padded = sampler.euler_sample(bucketed, text, prompt, 8, seed=0)
        assert relative_l2(reference, padded) <= 0.005, (frames, bucketed.bucket_for(aligned))


@pytest.fixture(scope="module")
def fixed_shape_engine(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> ZipVoiceEngine:
    """One engine with `fixed_shapes` and buckets 255 and 511 for the module: opening its bucket
    sessions is most of a test's time, and a request only reads them (its traces are its own)."""
    config = engine_config(tiny_model_dir, tmp_path_factory.mktemp("fixed-state"), fixed_shapes=True)
    engine = ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=(255, 511))))
    engine.load()
    return engine


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


def test_the_encoder_fed_speed_for_frames_yields_exactly_that_many_frames(real_structure_dir):
    model_dir = real_structure_dir
    encoder = runtime.TextEncoder(providers.open_session(model_dir / "text_encoder.onnx", "cpu", CONFIG))
    prompt_tokens, tokens, prompt_frames = [5] * 23, [7] * 61, 200
    planned = sampler.total_frames(prompt_frames, len(prompt_tokens), len(tokens), 1.0)
    for frames in range(planned, planned + 4):
        speed = sampler.speed_for_frames(prompt_frames, len(prompt_tokens), len(tokens), frames)
        assert encoder(tokens, prompt_tokens, prompt_frames, speed).shape[1] == frames


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
    for text in ("안녕하세요.", "오늘은 배터리를 봅니다."):
        for _ in engine.stream(SynthesisRequest(text, seed=1, early_audio=False)):
            pass
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
