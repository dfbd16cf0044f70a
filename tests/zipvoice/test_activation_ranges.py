"""The lean calibration (engine/zipvoice/activation_ranges.py) gives exactly onnxruntime's own ranges and
quantised graph. On the small decoder graph with the real signature (tests/zipvoice/simple_decoder.py):
onnxruntime's calibrator and quantiser take minutes on the real layer counts, and the whole a16w8 prepare
of both real-structure fixtures, which goes through this module, is test_prepare_qdq.py's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnxruntime.quantization import QuantType, quantize
from onnxruntime.quantization.calibrate import create_calibrator, load_tensors_data
from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

from npu_worker.engine.zipvoice import activation_ranges

FRAMES = 40


def _feeds(count: int, seed: int = 7) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "t": np.array(rng.uniform(), np.float32),
            "guidance_scale": np.array(1.0, np.float32),
            **{
                name: rng.standard_normal((1, FRAMES, 100)).astype(np.float32)
                for name in ("x", "text_condition", "speech_condition")
            },
        }
        for _ in range(count)
    ]


@pytest.fixture(scope="module")
def decoder(qnn_model_dir: Path) -> Path:
    return qnn_model_dir / "fm_decoder.onnx"


def _config(decoder: Path, feeds):  # noqa: ANN001, ANN202
    return get_qnn_qdq_config(
        str(decoder),
        activation_ranges.FeedReader(feeds),
        activation_type=QuantType.QUInt16,
        weight_type=QuantType.QUInt8,
        stride=1,
    )


def test_the_ranges_are_onnxruntimes_own_calibrators(decoder: Path, tmp_path):
    feeds = _feeds(3)
    config = _config(decoder, feeds)
    cache = tmp_path / "ranges.json"
    activation_ranges.write_ranges(decoder, config, feeds, cache, tmp_path)
    lean = load_tensors_data(cache)

    reference = create_calibrator(
        decoder, config.op_types_to_quantize, augmented_model_path=str(tmp_path / "reference.onnx")
    )
    for feed in feeds:  # strided as quantize_static does with CalibStridedMinMax=1
        reference.collect_data(activation_ranges.FeedReader([feed]))
    expected = reference.compute_data()

    assert len(lean.data) >= 8  # every activation of the graph
    assert set(lean.data) == set(expected.data)
    for name, ranges in expected.data.items():
        np.testing.assert_array_equal(lean.data[name].range_value, ranges.range_value, err_msg=name)


def test_the_quantised_graph_is_the_one_onnxruntime_makes(decoder: Path, tmp_path):
    feeds = _feeds(2)
    ours, theirs = tmp_path / "ours.onnx", tmp_path / "theirs.onnx"
    (tmp_path / "work").mkdir()
    activation_ranges.quantize_with_ranges(decoder, ours, _config(decoder, feeds), feeds, tmp_path / "work")
    quantize(str(decoder), str(theirs), _config(decoder, feeds))

    def constants(path: Path) -> dict[str, np.ndarray]:
        model = onnx.load(str(path))
        return {tensor.name: onnx.numpy_helper.to_array(tensor) for tensor in model.graph.initializer}

    ours_constants, theirs_constants = constants(ours), constants(theirs)
    assert any(name.endswith("_scale") for name in ours_constants)
    assert ours_constants.keys() == theirs_constants.keys()
    for name, value in theirs_constants.items():
        np.testing.assert_array_equal(ours_constants[name], value, err_msg=name)


def test_the_augmented_graph_is_onnxruntimes_with_each_reduction_before_its_first_consumer(
    decoder: Path, tmp_path
):
    config = _config(decoder, _feeds(1))
    ours = activation_ranges._lean_calibrator_class()(
        decoder, config.op_types_to_quantize, augmented_model_path=str(tmp_path / "ours.onnx")
    )
    ours.augment_graph()
    create_calibrator(  # augments the graph and saves it there
        decoder, config.op_types_to_quantize, augmented_model_path=str(tmp_path / "theirs.onnx")
    )
    ours_graph, theirs_graph = (
        onnx.load(str(tmp_path / "ours.onnx")),
        onnx.load(str(tmp_path / "theirs.onnx")),
    )

    def shape_input(node) -> bool:  # noqa: ANN001 - the Reshape's [-1] constant has a random name
        return node.op_type == "Reshape" and node.name.endswith("_Reshape")

    def nodes(graph) -> list[tuple]:  # noqa: ANN001
        return sorted(
            (n.op_type, n.name, tuple(n.input[:1] if shape_input(n) else n.input), tuple(n.output))
            for n in graph.graph.node
        )

    assert nodes(ours_graph) == nodes(theirs_graph)
    assert sorted(o.name for o in ours_graph.graph.output) == sorted(
        o.name for o in theirs_graph.graph.output
    )
    order = list(ours_graph.graph.node)
    original = [n for n in order if not n.name.endswith(("_ReduceMin", "_ReduceMax", "_Reshape"))]
    position = {id(n): i for i, n in enumerate(order)}
    reductions = [n for n in order if n.op_type in ("ReduceMin", "ReduceMax")]
    assert reductions
    for reduction in reductions:
        tensor = reduction.input[0]
        consumers = [position[id(n)] for n in original if tensor in n.input]
        if consumers:  # nothing between the reduction and the tensor's first consumer but other reductions
            assert position[id(reduction)] < min(consumers), reduction.name
            between = order[position[id(reduction)] : min(consumers)]
            assert all(n not in original for n in between), reduction.name
