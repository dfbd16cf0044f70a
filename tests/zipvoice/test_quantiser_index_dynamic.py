"""make-test-model's int8 files (`zipvoice_model._quantize`, onnxruntime's `quantize_dynamic`) with
onnxruntime's initializer and node lookups by name served from quantiser_index's indexes: they walked
every initializer (`find_by_name`) and copied and walked every node (`find_node_by_name`) per lookup,
9 of the 11 s a profile of one tiny int8 build spent quantising. The bytes must not change."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.onnx_model import ONNXModel

from npu_worker.engine.zipvoice import quantiser_index
from npu_worker.testing import zipvoice_model

pytestmark = pytest.mark.skipif(
    not quantiser_index.applies(None), reason="the index stands in only for the onnxruntime it was checked on"
)


@pytest.mark.parametrize("stem", ["text_encoder", "fm_decoder"])
def test_the_int8_file_is_byte_for_byte_onnxruntimes_own(tiny_model_dir: Path, tmp_path, stem: str):
    """Ours: the session's tiny model's int8 file, which `build_model_dir` quantised from this very
    fp32 file with `_quantize` (quantising it again here cost ≈ 1-2 s of CPU, 10-20 s of a loaded
    worker's wall); theirs: onnxruntime's own quantiser, unindexed."""
    source = tiny_model_dir / f"{stem}.onnx"
    ours, theirs = tiny_model_dir / f"{stem}_int8.onnx", tmp_path / "theirs.onnx"
    quantize_dynamic(source, theirs, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8)

    assert ours.read_bytes() == theirs.read_bytes()
    assert b"MatMulInteger" in ours.read_bytes() or b"DynamicQuantizeLinear" in ours.read_bytes()


def test_no_lookup_walks_the_initializers_or_the_nodes(tiny_model_dir: Path, tmp_path, monkeypatch):
    """Each item onnxruntime's `find_by_name` visits, over the initializers or the nodes, is counted
    (before: a walk per lookup, lookups × items; `find_node_by_name` walks through `onnx_model`'s)."""
    from onnxruntime.quantization import base_quantizer, onnx_model, onnx_quantizer, quant_utils
    from onnxruntime.quantization.operators import conv, matmul

    visited: list[int] = []
    original = quant_utils.find_by_name

    def counted(name: str, items):  # noqa: ANN001, ANN202 - onnxruntime's arguments
        if len(items) and isinstance(items[0], (onnx.TensorProto, onnx.NodeProto)):
            visited.append(len(items))
        return original(name, items)

    for module in (quant_utils, base_quantizer, onnx_model, onnx_quantizer, conv, matmul):
        monkeypatch.setattr(module, "find_by_name", counted)
    output = tmp_path / "int8.onnx"
    zipvoice_model._quantize(tiny_model_dir / "fm_decoder.onnx", output)

    graph = onnx.load(str(output)).graph
    assert len(graph.initializer) > 20 and len(graph.node) > 20
    assert sum(visited) <= len(graph.initializer) + len(graph.node)  # (lookups × items before)


def test_onnxruntimes_lookups_are_back_after_the_block():
    from onnxruntime.quantization import onnx_quantizer

    before, lookup = dict(ONNXModel.__dict__), onnx_quantizer.find_by_name
    with quantiser_index.indexed_lookups() as used:
        assert used
        assert ONNXModel.find_node_by_name is not before["find_node_by_name"]
        assert onnx_quantizer.find_by_name is not lookup
    for name in ("find_node_by_name", "get_initializer", "remove_initializer"):
        assert ONNXModel.__dict__[name] is before[name]
    assert onnx_quantizer.find_by_name is lookup


def test_another_onnxruntime_keeps_its_own_lookups(monkeypatch):
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "__version__", "1.33.0")
    with quantiser_index.indexed_lookups() as used:
        assert not used
        assert ONNXModel.find_node_by_name is ONNXModel.__dict__["find_node_by_name"]


def test_a_node_lookup_finds_the_graphs_first_then_the_new_nodes():
    """As onnxruntime's: the graph's node list and then the new ones, the first so named."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", ["x"], ["y"], name="a"), onnx.helper.make_node("Relu", ["y"], ["z"], name="a")],
        "g", [], [],
    )  # fmt: skip
    new = [onnx.helper.make_node("Abs", ["z"], ["w"], name="b")]
    with quantiser_index.indexed_lookups():
        find = ONNXModel.find_node_by_name
        assert find(None, "a", new, graph).output == ["y"]
        assert find(None, "b", new, graph).op_type == "Abs"
        assert find(None, "c", new, graph) is None
        new.append(onnx.helper.make_node("Neg", ["w"], ["v"], name="c"))
        assert find(None, "c", new, graph).op_type == "Neg"  # appended since: found
        graph.node[0].name = "renamed"
        assert find(None, "a", new, graph).output == ["z"]  # changed in place: looked for again
