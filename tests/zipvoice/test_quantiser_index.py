"""The quantiser's input renames from an index (engine/zipvoice/quantiser_index.py): the same quantised
file byte for byte as onnxruntime's own scans, without a scan of the graph per renamed tensor. On the
small decoder graph with the real signature (tests/zipvoice/simple_decoder.py); the real-structure
decoder's a16w8 prepare goes through the same code in test_prepare_qdq.py."""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path

import numpy as np
import pytest
from onnxruntime.quantization import QuantType, quantize_static
from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config
from onnxruntime.quantization.onnx_model import ONNXModel

from npu_worker.engine.zipvoice import activation_ranges, quantiser_index
from tests.zipvoice.test_activation_ranges import _feeds as activation_feeds

FRAMES = 40


def _feeds(count: int) -> list[dict[str, np.ndarray]]:
    return activation_feeds(count, seed=11)


@pytest.fixture(scope="module")
def decoder(qnn_model_dir: Path) -> Path:
    return qnn_model_dir / "fm_decoder.onnx"


def _config(decoder: Path, feeds):  # noqa: ANN001, ANN202 - as qdq.qdq_graph asks for it
    return get_qnn_qdq_config(
        str(decoder),
        activation_ranges.FeedReader(feeds),
        activation_type=QuantType.QUInt16,
        weight_type=QuantType.QUInt8,
        stride=1,
    )


pytestmark = pytest.mark.skipif(
    not quantiser_index.applies({}), reason="the index stands in only for the onnxruntime it was checked on"
)


def test_the_quantised_file_is_byte_for_byte_onnxruntimes_own(decoder: Path, tmp_path):
    feeds = _feeds(2)
    config = _config(decoder, feeds)
    ours, theirs = tmp_path / "ours.onnx", tmp_path / "theirs.onnx"
    activation_ranges.quantize_with_ranges(decoder, ours, config, feeds, tmp_path)
    settings = {
        name: getattr(config, name)
        for name in inspect.signature(quantize_static).parameters
        if hasattr(config, name) and name != "calibration_data_reader"
    }
    cache = tmp_path / "activation_ranges.json"  # the ranges quantize_with_ranges wrote
    quantize_static(str(decoder), str(theirs), None, calibration_cache_path=cache, **settings)

    assert ours.read_bytes() == theirs.read_bytes()
    assert b"QuantizeLinear" in ours.read_bytes()


def test_no_rename_walks_the_whole_graph(decoder: Path, tmp_path, monkeypatch):
    """onnxruntime renamed each quantised tensor by visiting every node of the graph (17 million visits
    on the small export's decoder): the node visits of its per-node rename are counted here."""
    visits = []
    original = ONNXModel.replace_node_input

    def counted(node, old: str, new: str) -> None:  # noqa: ANN001 - a NodeProto
        visits.append(node.name)
        original(node, old, new)

    monkeypatch.setattr(ONNXModel, "replace_node_input", staticmethod(counted))
    feeds = _feeds(1)
    output = tmp_path / "quantised.onnx"
    activation_ranges.quantize_with_ranges(decoder, output, _config(decoder, feeds), feeds, tmp_path)

    import onnx

    nodes = len(onnx.load(str(output), load_external_data=False).graph.node)
    assert nodes > 20
    assert len(visits) <= nodes  # (a scan per renamed tensor: tensors × nodes)


def test_onnxruntimes_methods_are_back_after_the_block():
    before = dict(ONNXModel.__dict__)
    with quantiser_index.indexed_renames({}) as used:
        assert used
        assert ONNXModel.replace_input_of_all_nodes is not before["replace_input_of_all_nodes"]
    assert ONNXModel.__dict__["replace_input_of_all_nodes"] is before["replace_input_of_all_nodes"]
    assert ONNXModel.__dict__["replace_input_of_nodes"] is before["replace_input_of_nodes"]


def test_a_configuration_that_renames_otherwise_keeps_onnxruntimes_scans():
    with quantiser_index.indexed_renames({"DedicatedQDQPair": True}) as used:
        assert not used


def test_no_initializer_lookup_walks_the_initializers(decoder: Path, tmp_path, monkeypatch):
    """onnxruntime found each initializer by name in a walk over all of them (`find_by_name`: 20 645
    walks of ≈ 1 300 initializers and more on the small export's decoder): the initializers those walks
    visit are counted here, the QDQ MatMul's own lookups too (`operators/matmul.py` imported it apart,
    and each MatMul's inputs and output were still looked up by a walk)."""
    import onnx
    from onnxruntime.quantization import base_quantizer, onnx_model, qdq_quantizer, quant_utils
    from onnxruntime.quantization.operators import conv, matmul

    visited: dict[str, list[int]] = {}
    original = quant_utils.find_by_name

    def counting(module: str):  # noqa: ANN202 - onnxruntime's find_by_name
        def counted(name: str, items):  # noqa: ANN001, ANN202 - onnxruntime's arguments
            if len(items) and isinstance(items[0], onnx.TensorProto):
                visited.setdefault(module, []).append(len(items))
            return original(name, items)

        return counted

    for module in (quant_utils, base_quantizer, onnx_model, qdq_quantizer, conv, matmul):
        monkeypatch.setattr(module, "find_by_name", counting(module.__name__))
    feeds = _feeds(1)
    output = tmp_path / "quantised.onnx"
    activation_ranges.quantize_with_ranges(decoder, output, _config(decoder, feeds), feeds, tmp_path)

    initializers = len(onnx.load(str(output), load_external_data=False).graph.initializer)
    assert initializers > 20
    assert sum(map(sum, visited.values())) <= initializers  # (a walk per lookup: lookups × initializers)
    assert matmul.__name__ not in visited and conv.__name__ not in visited  # (9 walks of the 5 before)


def _renamed_twice(rebuild: str) -> list[list[str]]:
    """A tensor renamed, the node list rebuilt by onnxruntime's `rebuild` method, then renamed again:
    each node's inputs after."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["a"], name="first"),
            helper.make_node("Relu", ["a"], ["y"], name="then"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = ONNXModel(helper.make_model(graph))
    for old, new in (("a", "b"), ("b", "c")):
        model.replace_output_of_all_nodes(old, new)
        model.replace_input_of_all_nodes(old, new)
        getattr(model, rebuild)()
    return [list(node.input) for node in model.model.graph.node]


@pytest.mark.parametrize("rebuild", ["topological_sort", "clean_initializers"])
def test_a_rebuilt_node_list_is_indexed_again(rebuild: str):
    """Both rebuild the graph's node list with the same length: the index held the old node objects
    and renamed those, leaving the graph's node reading 'b', a tensor nothing makes."""
    theirs = _renamed_twice(rebuild)
    with quantiser_index.indexed_renames({}):
        ours = _renamed_twice(rebuild)
    assert ours == theirs == [["x"], ["c"]]


def test_blocks_in_two_threads_leave_onnxruntimes_methods_in_place():
    """A block entered in another thread while one is open found the first block's swap and put that back
    on leaving last: onnxruntime's methods stayed swapped after both."""
    import threading

    before = dict(ONNXModel.__dict__)
    entered, first_left = threading.Event(), threading.Event()

    def second() -> None:
        with quantiser_index.indexed_renames({}):
            entered.set()
            first_left.wait(5)

    with quantiser_index.indexed_renames({}):
        thread = threading.Thread(target=second)
        thread.start()
        entered.wait(0.5)  # set here only when blocks overlap; else the second enters once this one has left
    first_left.set()
    thread.join(10)
    assert not thread.is_alive()
    for name in (
        "replace_input_of_all_nodes",
        "replace_input_of_nodes",
        "get_initializer",
        "remove_initializer",
    ):
        assert ONNXModel.__dict__[name] is before[name], name


def _bias_and_sharing_graph(path: Path) -> None:
    """Gemms reading one weight and one bias (the bias copied per reader: `replace_input_of_nodes`), a
    Conv's bias, and Transpose, Reshape, Concat, MaxPool, which share their input's quantisation
    (`_quantize_sharing_param_tensors`): the paths the real decoder's profile spent its time in, which
    the decoder graph above (MatMul, Add, Mul, Tanh) has none of."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)

    def weights(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w", "b"], ["g1"], name="gemm1"),
            helper.make_node("Gemm", ["x", "w", "b"], ["g2"], name="gemm2"),
            helper.make_node("Conv", ["img", "cw", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Transpose", ["g1"], ["t"], name="transpose", perm=[1, 0]),
            helper.make_node("Reshape", ["t", "shape"], ["r"], name="reshape"),
            helper.make_node("Concat", ["r", "g2"], ["joined"], name="concat", axis=0),
            helper.make_node("Relu", ["joined"], ["y"], name="relu"),
            helper.make_node("MaxPool", ["c"], ["z"], name="pool", kernel_shape=[2, 2]),
        ],
        "bias_and_sharing",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8]),
            helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 6, 6]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 8]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 5, 5]),
        ],
        [
            weights("w", (8, 8)),
            weights("b", (8,)),
            weights("cw", (4, 3, 3, 3)),
            weights("cb", (4,)),
            numpy_helper.from_array(np.array([4, 8], np.int64), "shape"),
        ],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


class _Feeds:
    """The same two calibration feeds each time it is made (a CalibrationDataReader)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(5)
        self.feeds = iter(
            [
                {
                    "x": rng.standard_normal((4, 8)).astype(np.float32),
                    "img": rng.standard_normal((1, 3, 6, 6)).astype(np.float32),
                }
                for _ in range(2)
            ]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.feeds, None)


def test_bias_and_sharing_paths_quantise_byte_for_byte_as_onnxruntime(tmp_path, monkeypatch):
    graph = tmp_path / "graph.onnx"
    _bias_and_sharing_graph(graph)
    used = []
    original = quantiser_index._replace_input_of_nodes
    monkeypatch.setattr(
        quantiser_index, "_replace_input_of_nodes", lambda *args: used.append(1) or original(*args)
    )
    quantised = {}
    for indexed in (False, True):
        config = get_qnn_qdq_config(
            str(graph), _Feeds(), activation_type=QuantType.QUInt16, weight_type=QuantType.QUInt8
        )
        settings = {
            name: getattr(config, name)
            for name in inspect.signature(quantize_static).parameters
            if hasattr(config, name) and name != "calibration_data_reader"
        }
        output = tmp_path / f"indexed_{indexed}.onnx"
        with quantiser_index.indexed_renames(config.extra_options) if indexed else contextlib.nullcontext():
            quantize_static(str(graph), str(output), _Feeds(), **settings)
        quantised[indexed] = output.read_bytes()

    assert quantised[True] == quantised[False]
    assert used  # the shared bias went through the index's replace_input_of_nodes
    assert b"b_quantized" in quantised[True] and b"cb_quantized" in quantised[True]  # both biases quantised


def test_another_onnxruntime_runs_its_own_code_even_with_the_internals_moved(monkeypatch):
    """An onnxruntime the index was not checked on is left alone; one whose `onnx_model` module moved
    made the block itself fail on importing it (ImportError: prepare --precision a16w8 refused)."""
    import sys

    import onnxruntime

    monkeypatch.setattr(onnxruntime, "__version__", "1.33.0")
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization.onnx_model", None)  # import fails
    with quantiser_index.indexed_renames({}) as used:
        assert not used


def _checked_against_onnxruntimes_scans(monkeypatch) -> list[str]:  # noqa: ANN001 - pytest's fixture
    """Each rename and initializer lookup the index serves, checked against what onnxruntime's own scan
    finds at that moment; returns what was checked. The index sees node inputs change only through its
    renames and initializer names only as they are appended: a quantiser that assigned a node's input
    or renamed an initializer in place (onnxruntime's QOperator ones do the first) would leave it
    missing readers or names, and a check here fails at the call, whether or not the file shows it."""
    checked: list[str] = []
    rename_all, rename_some = (
        quantiser_index._replace_input_of_all_nodes,
        quantiser_index._replace_input_of_nodes,
    )
    lookups = quantiser_index._initializer_lookups

    def all_nodes(self, old: str, new: str) -> None:  # noqa: ANN001 - an ONNXModel
        rename_all(self, old, new)
        assert not [node.name for node in self.model.graph.node if old in node.input], old
        checked.append("rename")

    def some_nodes(self, old: str, new: str, names) -> None:  # noqa: ANN001 - an ONNXModel, a set
        left = [node.name for node in self.model.graph.node if node.name not in names and old in node.input]
        rename_some(self, old, new, names)
        assert not [node.name for node in self.model.graph.node if node.name in names and old in node.input]
        assert [node.name for node in self.model.graph.node if old in node.input] == left, old
        checked.append("rename")

    def checked_lookups(original, original_remove):  # noqa: ANN001, ANN202 - onnxruntime's functions
        find, get_initializer, remove = lookups(original, original_remove)

        def find_checked(name: str, items):  # noqa: ANN001, ANN202
            found, scanned = find(name, items), original(name, items)
            assert (found is None) == (scanned is None) and (found is None or found == scanned), name
            checked.append("lookup")
            return found

        return find_checked, lambda self, name: find_checked(name, self.model.graph.initializer), remove

    monkeypatch.setattr(quantiser_index, "_replace_input_of_all_nodes", all_nodes)
    monkeypatch.setattr(quantiser_index, "_replace_input_of_nodes", some_nodes)
    monkeypatch.setattr(quantiser_index, "_initializer_lookups", checked_lookups)
    return checked


def test_every_rename_and_lookup_of_the_qdq_flow_finds_what_onnxruntimes_scan_finds(
    decoder: Path, tmp_path, monkeypatch
):
    """A guard: the a16w8 QDQ flow we call never changes the graph behind the index's back (see
    `_checked_against_onnxruntimes_scans`), on the decoder graph and on the bias and sharing paths."""
    checked = _checked_against_onnxruntimes_scans(monkeypatch)
    feeds = _feeds(1)
    activation_ranges.quantize_with_ranges(
        decoder, tmp_path / "q.onnx", _config(decoder, feeds), feeds, tmp_path
    )
    graph = tmp_path / "graph.onnx"
    _bias_and_sharing_graph(graph)
    config = get_qnn_qdq_config(
        str(graph), _Feeds(), activation_type=QuantType.QUInt16, weight_type=QuantType.QUInt8
    )
    (tmp_path / "ranges").mkdir()
    ranges_feeds = list(_Feeds().feeds)
    activation_ranges.quantize_with_ranges(
        graph, tmp_path / "q2.onnx", config, ranges_feeds, tmp_path / "ranges"
    )
    assert checked.count("rename") > 20 and checked.count("lookup") > 20
