"""Fixed-shape decoder buckets on the real ZipVoice structure (Zipformer stacks with 2x/4x downsampling).

Runs on CPU every time: fixed-shape sessions at odd and even lengths against the dynamic session,
the bucketed decoder over every bucket, the padding bound, and the engine with `fixed_shapes`. The
session-level checks run on one real-structure model (`one_real_structure_dir`: the small export in
CI); on both they were this suite's heaviest file, the same code twice on graphs of the same structure.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from npu_worker.engine import providers
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice import decoders, runtime, sampler
from npu_worker.protocol import ModelLoadError

CONFIG = RuntimeConfig(threads=1)
BUCKETS = (63, 127)
PRECISIONS = ["fp32", "int8"]


def decoder_path(model_dir: Path, precision: str) -> Path:
    return model_dir / ("fm_decoder.onnx" if precision == "fp32" else "fm_decoder_int8.onnx")


OPENED_BUCKETED: dict[Path, decoders.BucketedDecoder] = {}


@functools.cache
def dynamic_session(path: Path) -> Any:
    """One dynamic CPU session per decoder file for the module (a session is read-only to run): the
    overflow session of the bucketed decoder opened for `path`, where there is one, is that very session
    (`open_bucketed_decoder` opens it as `open_session(path, "cpu", CONFIG)`: ≈ 1-1.3 s of CPU more)."""
    if path in OPENED_BUCKETED and OPENED_BUCKETED[path].overflow is not None:
        return OPENED_BUCKETED[path].overflow.session
    return providers.open_session(path, "cpu", CONFIG)


@functools.cache
def bucketed_decoder(path: Path) -> decoders.BucketedDecoder:
    """`open_bucketed_decoder` at BUCKETS, once per decoder file: its fixed-shape session at 63 frames
    is the one the fixed-shape test checks at 63 (opening one is ≈ 2.5 s of CPU on the real structure)."""
    OPENED_BUCKETED[path] = runtime.open_bucketed_decoder(path, "cpu", CONFIG, BUCKETS)
    return OPENED_BUCKETED[path]


def fixed_session(path: Path, frames: int) -> Any:
    """A fixed-shape CPU session at `frames`: the bucketed decoder's where it is one of BUCKETS."""
    if frames in BUCKETS:
        return bucketed_decoder(path).decoders[frames].session
    return providers.open_session(path, "cpu", CONFIG, {"N": 1, "T": frames})


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
    one_real_structure_dir, precision, frames
):
    path = decoder_path(one_real_structure_dir, precision)
    fixed = runtime.Decoder(fixed_session(path, frames), 3.0)
    dynamic = runtime.Decoder(dynamic_session(path), 3.0)
    inputs = decoder_inputs(frames)
    assert relative_l2(dynamic(0.3, *inputs), fixed(0.3, *inputs)) < 1e-5


@pytest.mark.parametrize("precision", PRECISIONS)
def test_bucketed_decoder_runs_every_bucket_at_odd_and_even_lengths(one_real_structure_dir, precision):
    path = decoder_path(one_real_structure_dir, precision)
    bucketed = bucketed_decoder(path)
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
def test_padding_to_a_bucket_changes_the_final_mel_by_at_most_half_a_percent(
    one_real_structure_dir, precision
):
    """Whole sampling runs at lecture-like lengths (prompt 117 or 323 frames), default buckets, 8 steps.

    The bound holds with the least room at the shortest length, where the padding is the largest share
    (small export, relative L2, fp32 / int8): 234 frames into 383, 0.0017 / 0.0041; 621 into 767, 0.0012
    / 0.0040; 904 into 1151 (run here before: 6.9 s of CPU per precision, as much as the two others
    together), 0.0010 / 0.0038. Every bucket is the same dynamic session, so a third bucket tested only
    the padding arithmetic again, with more room."""
    path = decoder_path(one_real_structure_dir, precision)
    session = dynamic_session(path)
    dynamic = runtime.Decoder(session, 3.0)
    bucketed = runtime.BucketedDecoder(dict.fromkeys(decoders.DEFAULT_BUCKETS, session), None, 3.0)
    rng = np.random.default_rng(1)
    for prompt_frames, frames in ((117, 234), (323, 621)):
        aligned = bucketed.aligned_frames(frames)
        assert aligned - frames < decoders.PHASE
        text = rng.standard_normal((1, aligned, 100), dtype=np.float32)
        prompt = 0.1 * rng.standard_normal((prompt_frames, 100), dtype=np.float32)
        reference = sampler.euler_sample(dynamic, text, prompt, 8, seed=0)
        padded = sampler.euler_sample(bucketed, text, prompt, 8, seed=0)
        assert relative_l2(reference, padded) <= 0.005, (frames, bucketed.bucket_for(aligned))


def test_the_encoder_fed_speed_for_frames_yields_exactly_that_many_frames(real_structure_dir):
    model_dir = real_structure_dir
    encoder = runtime.TextEncoder(providers.open_session(model_dir / "text_encoder.onnx", "cpu", CONFIG))
    prompt_tokens, tokens, prompt_frames = [5] * 23, [7] * 61, 200
    planned = sampler.total_frames(prompt_frames, len(prompt_tokens), len(tokens), 1.0)
    for frames in range(planned, planned + 4):
        speed = sampler.speed_for_frames(prompt_frames, len(prompt_tokens), len(tokens), frames)
        assert encoder(tokens, prompt_tokens, prompt_frames, speed).shape[1] == frames
