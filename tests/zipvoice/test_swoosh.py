"""The Swoosh guard rewrite: found in the real-structure decoder, outputs unchanged, overflow still handled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from npu_worker.engine.providers import RuntimeConfig, session_options
from npu_worker.engine.zipvoice import runtime, swoosh
from tests.zipvoice.conftest import SHARED_REAL_STRUCTURE


def _session(model: str | bytes) -> ort.InferenceSession:
    return ort.InferenceSession(
        model, session_options(RuntimeConfig(threads=1)), providers=["CPUExecutionProvider"]
    )


def _guarded_softplus() -> onnx.ModelProto:
    """y = Where(L == inf, s, L), L = log(1 + exp(s)), s = x − 4: the exporter's lowering, with its Casts."""
    nodes = [
        helper.make_node("Constant", [], ["four"], value=numpy_helper.from_array(np.array(4.0, np.float32))),
        helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1.0, np.float32))),
        helper.make_node(
            "Constant", [], ["inf"], value=numpy_helper.from_array(np.array(np.inf, np.float32))
        ),
        helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["xf", "four"], ["s"]),
        helper.make_node("Exp", ["s"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Log", ["e1"], ["l"]),
        helper.make_node("Cast", ["l"], ["lf"], to=TensorProto.FLOAT),
        helper.make_node("Equal", ["lf", "inf"], ["big"]),
        helper.make_node("Where", ["big", "s", "lf"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])
    graph = helper.make_graph(nodes, "guard", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_rewrite_keeps_the_function_over_the_whole_range() -> None:
    model = _guarded_softplus()
    original = model.SerializeToString()
    assert swoosh.rewrite_guards(model.graph) == 1
    ops = [node.op_type for node in model.graph.node]
    assert "Where" not in ops and "Equal" not in ops and ops.count("Clip") == ops.count("Max") == 1
    x = np.concatenate([np.linspace(-60, 60, 4001), [83.0, 90.0, 95.0, 200.0, 1e30]]).astype(np.float32)
    before = _session(original).run(None, {"x": x})[0]
    after = _session(model.SerializeToString()).run(None, {"x": x})[0]
    assert np.isfinite(after).all()
    assert np.array_equal(before[x < 20], after[x < 20])  # the same bits where rounding cannot differ
    np.testing.assert_allclose(after, before, rtol=1e-6)  # and within float precision beyond (x − 4 > 80: s)


def test_min_bound_for_graphs_older_than_opset_11() -> None:
    """`Clip` takes its bounds as tensors only from opset 11: older graphs get `Min`, same values."""
    model = _guarded_softplus()
    original = model.SerializeToString()
    assert swoosh.rewrite_guards(model.graph, clip=False) == 1
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("Min") == ops.count("Max") == 1 and "Clip" not in ops
    x = np.linspace(-60, 200, 2001).astype(np.float32)
    before = _session(original).run(None, {"x": x})[0]
    after = _session(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_allclose(after, before, rtol=1e-6)


def test_a_where_that_is_no_guard_is_left_alone() -> None:
    model = _guarded_softplus()
    model.graph.node[2].attribute[0].t.CopyFrom(numpy_helper.from_array(np.array(3.0, np.float32), "inf"))
    assert swoosh.rewrite_guards(model.graph) == 0


DECODERS = ("fm_decoder.onnx", "fm_decoder_int8.onnx")


def test_real_structure_decoder_rewritten_with_equal_outputs(one_real_structure_dir: Path) -> None:
    """On one real-structure model (the small export where it is beside the repo, as in CI): four
    sessions of the decoder, ≈ 4.5 s of CPU per model; the generated model's guards are checked to be
    the export's below (it ran these same sessions on it too)."""
    for name in DECODERS:
        path = one_real_structure_dir / name
        graph = swoosh.rewritten_model(path)
        assert graph is not None, f"no guard found in {name}"
        rewritten = onnx.load_from_string(graph)
        assert not any(n.op_type == "Where" and "out_proj" in n.name for n in rewritten.graph.node)
        decoder_before = runtime.Decoder(_session(str(path)), 3.0)
        decoder_after = runtime.Decoder(_session(graph), 3.0)
        rng = np.random.default_rng(1)
        x = rng.standard_normal((1, 65, 100)).astype(np.float32)
        inputs = (0.4, x, 0.5 * x, np.zeros_like(x))
        before, after = decoder_before(*inputs), decoder_after(*inputs)
        assert float(np.linalg.norm(after - before) / np.linalg.norm(before)) < 1e-6


@pytest.mark.skipif(not SHARED_REAL_STRUCTURE.is_dir(), reason="no real-structure export beside the repo")
@pytest.mark.parametrize("name", DECODERS)
def test_the_generated_decoder_has_the_guards_of_the_real_structure_export(
    name: str, tiny_model_dir: Path
) -> None:
    """The rewrite finds as many guards in the generated decoder as in the export's, and leaves none of
    its `out_proj` Where nodes: the same rewrite, checked for equal outputs above on the export."""
    generated, export = (onnx.load(str(folder / name)) for folder in (tiny_model_dir, SHARED_REAL_STRUCTURE))
    found = swoosh.rewrite_guards(generated.graph)
    assert found == swoosh.rewrite_guards(export.graph) > 0, found
    assert not any(n.op_type == "Where" and "out_proj" in n.name for n in generated.graph.node)


def test_open_models_falls_back_to_the_file_when_the_rewrite_fails(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: Path) -> bytes:
        raise RuntimeError("unreadable")

    monkeypatch.setattr(swoosh, "rewritten_model", broken)
    assert runtime.decoder_graph(tiny_model_dir / "fm_decoder.onnx") is None


def test_cpu_models_open_the_rewritten_decoder(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[Path] = []
    real = swoosh.rewritten_model
    monkeypatch.setattr(swoosh, "rewritten_model", lambda path: read.append(path) or real(path))
    decoder = tiny_model_dir / "fm_decoder.onnx"
    models = runtime.open_models(
        tiny_model_dir / "text_encoder.onnx", decoder, tiny_model_dir / "vocos_24khz.onnx", "cpu",
        RuntimeConfig(threads=1),
    )  # fmt: skip
    assert read == [decoder] and models.device == "cpu"
