"""The test model has the real ZipVoice-Distill structure, and onnxruntime treats it like the real export.

Compared with a random-weight export of the real architecture, small widths with the real layer counts,
when it lies beside the repository (`REFERENCE` below; CI provides it): same op types and counts, same
module node names, same parameter counts, same configuration. The shape behaviour needs nothing outside the repository: dynamic shapes run at any
T, fixing N=1 and an odd T runs, fixing N=1 and an even T fails at the first downsampling Reshape under
ORT_ENABLE_ALL (a known onnxruntime behaviour on the real export that the engine's fixed-shape path must
avoid), fixing T alone runs.
"""

from __future__ import annotations

import collections
import functools
import importlib.util
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper as oh

from npu_worker.testing import zipvoice_model as zm
from npu_worker.testing._onnx_trace import FLOAT, Tracer
from npu_worker.testing._zipformer_stack import encoder_pos, positional_table

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "data" / "zipvoice_small_structure"
GRAPHS = ("fm_decoder.onnx", "text_encoder.onnx", "vocos_24khz.onnx")
INT8_GRAPHS = ("fm_decoder_int8.onnx", "text_encoder_int8.onnx")
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason="reference export not beside the repo")
qnn = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_qnn") is None or os.environ.get("NPU_WORKER_QNN_TESTS", "1") == "0",
    reason="onnxruntime-qnn missing or NPU_WORKER_QNN_TESTS=0",
)


def network_nodes(path: Path) -> list[onnx.NodeProto]:
    """Nodes of the network: without Constants (numbering differs) and without the test model's guide."""
    nodes = onnx.load(str(path)).graph.node
    return [n for n in nodes if n.op_type != "Constant" and not n.name.startswith("/guide/")]


def histogram(path: Path) -> collections.Counter[str]:
    return collections.Counter(n.op_type for n in network_nodes(path))


def module_names(path: Path) -> collections.Counter[str]:
    """Node names without per-module counters: `/fm_decoder/1/downsample/Reshape_1` → `…/Reshape`
    (the quantiser names its nodes after tensors, `…/Unsqueeze_35_output_0_QuantizeLinear`)."""
    return collections.Counter(re.sub(r"_\d+(?=_|$)", "", n.name) for n in network_nodes(path))


def decoder_feeds(frames: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "t": np.array(0.4, np.float32),
        "x": rng.standard_normal((1, frames, 100)).astype(np.float32),
        "text_condition": 0.1 * rng.standard_normal((1, frames, 100)).astype(np.float32),
        "speech_condition": np.zeros((1, frames, 100), np.float32),
        "guidance_scale": np.array(3.0, np.float32),
    }


def decoder_session(path: Path, fixed: dict[str, int] | None = None, level=None) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    options.graph_optimization_level = level or ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    for name, value in (fixed or {}).items():
        options.add_free_dimension_override_by_name(name, value)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


Sessions = Callable[[str], ort.InferenceSession]


@pytest.fixture(scope="module")
def dynamic_session(tiny_model_dir: Path) -> Sessions:
    """One dynamic-shape session per file of the test model, shared by the module's tests: a session runs
    any length, and optimising the real-depth graph costs more than the runs."""
    return functools.cache(lambda graph: decoder_session(tiny_model_dir / graph))


@needs_reference
@pytest.mark.parametrize("graph", GRAPHS + INT8_GRAPHS)
def test_op_types_and_counts_are_those_of_the_reference_export(graph: str, tiny_model_dir: Path) -> None:
    assert histogram(tiny_model_dir / graph) == histogram(REFERENCE / graph)


@needs_reference
@pytest.mark.parametrize("graph", GRAPHS + INT8_GRAPHS)
def test_module_node_names_are_those_of_the_reference_export(graph: str, tiny_model_dir: Path) -> None:
    assert module_names(tiny_model_dir / graph) == module_names(REFERENCE / graph)


@needs_reference
def test_signatures_and_metadata_keys_are_those_of_the_reference_export(tiny_model_dir: Path) -> None:
    for graph in GRAPHS:
        # the signature does not depend on graph optimisation, which costs most of a session's creation
        unoptimised = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        ours, theirs = (decoder_session(d / graph, level=unoptimised) for d in (tiny_model_dir, REFERENCE))
        for mine, reference in (
            (ours.get_inputs(), theirs.get_inputs()),
            (ours.get_outputs(), theirs.get_outputs()),
        ):
            assert [(v.name, v.type, v.shape) for v in mine] == [(v.name, v.type, v.shape) for v in reference]
        keys = set(theirs.get_modelmeta().custom_metadata_map) - {"language", "maintainer", "model_author"}
        assert keys <= set(ours.get_modelmeta().custom_metadata_map), graph


def reference_parameter_counts() -> dict[str, int]:
    """The weights the reference export's files hold, per part. Counted in the files: the `parameter_counts`
    in the small export's model.json are those of the one-layer-per-stack export it was derived from."""
    encoder = onnx.load(str(REFERENCE / "text_encoder.onnx"))
    embed = next(int(np.prod(i.dims)) for i in encoder.graph.initializer if i.name == "embed.weight")
    return {
        "fm_decoder": zm.parameter_count(REFERENCE / "fm_decoder.onnx"),
        "text_encoder": zm.parameter_count(encoder) - embed,
        "embed": embed,
        "vocoder": zm.parameter_count(REFERENCE / "vocos_24khz.onnx"),
    }


@needs_reference
def test_parameter_counts_match_the_reference_export() -> None:
    vocab = len((REFERENCE / "tokens.txt").read_text(encoding="utf-8").splitlines())
    assert zm.parameter_counts("tiny", vocab=vocab) == reference_parameter_counts()


@needs_reference
def test_configuration_is_that_of_the_reference_export(tiny_model_dir: Path) -> None:
    """Same widths and the same (real) layer counts: model.json's `model` section is the reference's."""
    ours, theirs = (
        json.loads((d / "model.json").read_text(encoding="utf-8")) for d in (tiny_model_dir, REFERENCE)
    )
    assert ours["model"] == theirs["model"]


def test_architecture_parameter_counts_are_what_the_builder_writes(tiny_model_dir: Path) -> None:
    counts = zm.parameter_counts("tiny")
    assert zm.parameter_count(tiny_model_dir / "fm_decoder.onnx") == counts["fm_decoder"]
    assert (
        zm.parameter_count(tiny_model_dir / "text_encoder.onnx") == counts["text_encoder"] + counts["embed"]
    )
    assert zm.parameter_count(tiny_model_dir / "vocos_24khz.onnx") == counts["vocoder"]


def test_full_size_has_zipvoice_distills_parameter_counts() -> None:
    """Computed from the architecture; the builder's agreement with it is the test above."""
    counts = zm.parameter_counts("full", vocab=360)
    assert counts["fm_decoder"] == pytest.approx(118.5e6, rel=1e-3)
    assert counts["text_encoder"] + counts["embed"] == pytest.approx(4.2e6, rel=0.01)
    assert counts["vocoder"] == pytest.approx(13.5e6, rel=0.01)


def conv_kernels_per_stack(path: Path, part: str) -> dict[int, list[int]]:
    """Stack → the depthwise kernel of each of its layers (one conv_module1 per layer)."""
    kernels: dict[int, list[int]] = collections.defaultdict(list)
    for init in onnx.load(str(path)).graph.initializer:
        found = re.fullmatch(
            rf"{part}\.encoders\.(\d+)\.(?:encoder\.)?layers\.\d+\.conv_module1\.depthwise_conv\.weight",
            init.name,
        )
        if found:
            kernels[int(found[1])].append(int(init.dims[2]))
    return dict(kernels)


def test_decoder_has_five_stacks_with_the_real_downsampling_and_layer_counts(tiny_model_dir: Path) -> None:
    names = [n.name for n in network_nodes(tiny_model_dir / "fm_decoder.onnx")]
    for stack, factor in enumerate((1, 2, 4, 2, 1)):
        has_downsample = any(n.startswith(f"/fm_decoder/{stack}/downsample/Reshape") for n in names)
        has_upsample = any(n.startswith(f"/fm_decoder/{stack}/upsample/Reshape") for n in names)
        assert has_downsample == has_upsample == (factor > 1)
    assert conv_kernels_per_stack(tiny_model_dir / "fm_decoder.onnx", "fm_decoder") == {
        0: [31] * 2,
        1: [15] * 2,
        2: [7] * 4,
        3: [15] * 4,
        4: [31] * 4,
    }


def test_text_encoder_has_the_real_four_layers(tiny_model_dir: Path) -> None:
    assert conv_kernels_per_stack(tiny_model_dir / "text_encoder.onnx", "text_encoder") == {0: [9] * 4}


@pytest.mark.parametrize("frames", [1, 2, 37, 64, 101, 128, 255, 256, 300])
def test_dynamic_shapes_run_at_any_length(frames: int, dynamic_session: Sessions) -> None:
    v = dynamic_session("fm_decoder.onnx").run(None, decoder_feeds(frames))[0]
    assert v.shape == (1, frames, 100) and np.isfinite(v).all()


@pytest.mark.parametrize("model", ["fm_decoder.onnx", "fm_decoder_int8.onnx"])
def test_fixed_batch_and_odd_length_run_like_dynamic_shapes(
    model: str, tiny_model_dir: Path, dynamic_session: Sessions
) -> None:
    feeds = decoder_feeds(255)
    fixed = decoder_session(tiny_model_dir / model, {"N": 1, "T": 255}).run(None, feeds)[0]
    dynamic = dynamic_session(model).run(None, feeds)[0]
    assert np.allclose(fixed, dynamic, atol=1e-4)


@pytest.mark.parametrize("model", ["fm_decoder.onnx", "fm_decoder_int8.onnx"])
@pytest.mark.parametrize("frames", [64, 256])
def test_fixed_batch_and_even_length_fail_at_the_first_downsample(
    model: str, frames: int, tiny_model_dir
) -> None:
    """Known onnxruntime behaviour on the real export: once N=1 and an even T are constants, the
    optimiser folds the 2× downsample's padding wrongly and one frame too many reaches the Reshape."""
    session = decoder_session(tiny_model_dir / model, {"N": 1, "T": frames})
    with pytest.raises(Exception, match=r"/fm_decoder/1/downsample/Reshape_1"):
        session.run(None, decoder_feeds(frames))


def test_even_length_runs_with_only_the_length_fixed_or_without_optimisation(
    tiny_model_dir: Path, dynamic_session: Sessions
) -> None:
    path, feeds = tiny_model_dir / "fm_decoder.onnx", decoder_feeds(256)
    expected = dynamic_session("fm_decoder.onnx").run(None, feeds)[0]
    only_t = decoder_session(path, {"T": 256}).run(None, feeds)[0]
    unoptimised = decoder_session(path, {"N": 1, "T": 256}, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert np.allclose(only_t, expected, atol=1e-4)
    assert np.allclose(unoptimised.run(None, feeds)[0], expected, atol=1e-4)


def test_text_encoder_output_follows_the_token_count_through_its_stack(tiny_model_dir: Path) -> None:
    session = decoder_session(tiny_model_dir / "text_encoder.onnx")
    for tokens in (1, 7, 60):
        feeds = {
            "tokens": np.arange(20, 20 + tokens, dtype=np.int64)[None],
            "prompt_tokens": np.arange(30, 35, dtype=np.int64)[None],
            "prompt_features_len": np.array(40, np.int64),
            "speed": np.array(1.0, np.float32),
        }
        condition = session.run(None, feeds)[0]
        assert condition.shape == (1, int(np.ceil(40 / 5 * (5 + tokens))), 100)


def htp_simulator_session(path: Path, options: dict[str, str]) -> ort.InferenceSession:
    """The decoder at N=1, T=64 on the QNN HTP backend (the x86 simulator here), CPU fallback allowed."""
    import onnxruntime_qnn

    if not any(d.ep_name == "QNNExecutionProvider" for d in ort.get_ep_devices()):
        ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
    session_options = ort.SessionOptions()
    session_options.log_severity_level = 3
    session_options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    session_options.add_free_dimension_override_by_name("N", 1)
    session_options.add_free_dimension_override_by_name("T", 64)
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
    session_options.add_provider_for_devices(devices[:1], options)
    return ort.InferenceSession(str(path), session_options)


def qnn_share(session: ort.InferenceSession) -> float:
    counts = collections.Counter()
    for group in session.get_provider_graph_assignment_info():
        counts[group.ep_name] += len(group.get_nodes())
    return counts["QNNExecutionProvider"] / sum(counts.values())


@qnn
def test_htp_simulator_takes_no_node_of_the_unspecialised_decoder_like_the_real_export(
    tiny_model_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """With only N=1 and T=64 fixed, QNN claims nodes of the decoder with the real layer counts that cannot
    be fused into subgraphs (a node it does not support lies on a path between two it does); onnxruntime
    drops the claim and every node runs on the CPU, as for the real export. With one layer per stack QNN
    took about three quarters of the nodes: the smaller graph hid this. The load-time specialiser is what
    puts the decoder on the HTP (test_qnn_real_structure.py)."""
    session = htp_simulator_session(tiny_model_dir / "fm_decoder.onnx", zm.QNN_SIMULATOR_OPTIONS)
    assert qnn_share(session) == 0.0
    assert "cannot be fused together" in capfd.readouterr().err
    if REFERENCE.is_dir():
        reference = htp_simulator_session(REFERENCE / "fm_decoder.onnx", zm.QNN_SIMULATOR_OPTIONS)
        assert qnn_share(reference) == 0.0


def test_zipvoice_without_distill_mixes_two_passes_in_the_graph(tmp_path: Path) -> None:
    """`distill=False`: no guidance embedding; the export runs a batch of two and mixes them by guidance.
    Only the decoder is built (`build_model_dir` also wrote the text encoder, the vocoder and the voice)."""
    path = tmp_path / "fm_decoder.onnx"
    onnx.save(zm.build_fm_decoder(zm.SIZES["tiny"], zm.token_list(), False, 0, None), str(path))
    assert not any("guidance_scale_embed" in n.name for n in network_nodes(path))
    assert zm.parameter_count(path) == zm.parameter_counts("tiny", distill=False)["fm_decoder"]
    session = decoder_session(path)
    feeds = decoder_feeds(50)
    weak = session.run(None, feeds | {"guidance_scale": np.array(0.0, np.float32)})[0]
    strong = session.run(None, feeds)[0]
    assert weak.shape == (1, 50, 100) and not np.allclose(weak, strong)


def test_positional_encoding_table_and_long_input_branch_agree() -> None:
    """Up to 1000 frames the `If` takes the constant table, beyond it computes rows in the graph."""
    g = Tracer(0)
    g.output("Identity", [encoder_pos(g, "x", 48)], "pe")
    model = g.make_model(
        "pe",
        [oh.make_tensor_value_info("x", FLOAT, ["T", 1, 4])],
        [oh.make_tensor_value_info("pe", FLOAT, None)],
        {},
    )
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for frames in (1, 5, 1000, 1001, 1500):
        pe = session.run(None, {"x": np.zeros((frames, 1, 4), np.float32)})[0]
        expected = positional_table(np.arange(1 - frames, frames), 48)
        assert pe.shape == (1, 2 * frames - 1, 48)
        assert np.allclose(pe[0], expected, atol=1e-5)
