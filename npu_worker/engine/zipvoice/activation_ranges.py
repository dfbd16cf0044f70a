"""Activation ranges for static quantisation in the memory of one plain decoder call.

onnxruntime's MinMax calibrator puts a ReduceMin and a ReduceMax beside every activation and runs that
graph in onnxruntime's default execution order, which schedules many reductions long after their
tensor was made: most activations of a call stay alive together. On the full-size decoder at 767
frames a calibration call peaked at 7.7 GB where a plain call takes 1.1 GB, and the default five-bucket
prepare was killed for memory at 2079 frames on a 24 GB machine. The same graph run in priority-based
order frees each activation once it is reduced: 1.7 GB at 767 frames, and faster. The calibrator's
session options cannot be set from outside, so `LeanMinMaxCalibrater` opens the session itself (and
builds the augmented graph in one pass instead of one rescan per tensor), and
`quantize_with_ranges` hands the ranges to `quantize_static` as its calibration cache (a file it reads
instead of calibrating; onnxruntime >= 1.27), its input renames served from an index
(`quantiser_index`: 70 % of `quantize_static`'s time was their scans of the whole graph).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npu_worker.engine.zipvoice import quantiser_index

Feed = dict[str, np.ndarray]  # one decoder call's session inputs
# StaticQuantConfig.extra_options keys → MinMaxCalibrater arguments (onnxruntime's own mapping)
CALIBRATOR_OPTIONS = {
    "CalibTensorRangeSymmetric": "symmetric",
    "CalibMovingAverage": "moving_average",
    "CalibMovingAverageConstant": "averaging_constant",
}


class FeedReader:
    """onnxruntime's CalibrationDataReader over recorded feeds."""

    def __init__(self, feeds: Sequence[Feed]) -> None:
        self.feeds = list(feeds)
        self._next = iter(self.feeds)

    def get_next(self) -> Feed | None:
        return next(self._next, None)

    def __len__(self) -> int:
        return len(self.feeds)

    def set_range(self, start_index: int, end_index: int) -> None:
        self._next = iter(self.feeds[start_index:end_index])


def _lean_calibrator_class() -> type:
    from onnxruntime.quantization.calibrate import MinMaxCalibrater

    class LeanMinMaxCalibrater(MinMaxCalibrater):  # type: ignore[misc]
        """onnxruntime's MinMax calibrator with a session that runs each reduction right after its tensor,
        and the same augmented graph built in one pass (onnxruntime's own rescans the graph per tensor:
        37 s for the 2827-node decoder of the small export)."""

        def augment_graph(self) -> None:
            if self.per_channel:
                super().augment_graph()
                return
            _augment_in_one_pass(self)

        def create_inference_session(self) -> None:
            import onnxruntime as ort

            options = ort.SessionOptions()
            # as onnxruntime's own calibrator: the graph exactly as it will be quantised
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            options.execution_order = ort.ExecutionOrder.PRIORITY_BASED
            self.infer_session = ort.InferenceSession(
                self.augmented_model_path, sess_options=options, providers=self.execution_providers
            )

    return LeanMinMaxCalibrater


def _augment_in_one_pass(calibrator: Any) -> None:
    """What onnxruntime's `MinMaxCalibrater.augment_graph` makes (per-tensor, non-per-channel): for each
    calibrated tensor T a ReduceMin and a ReduceMax (keepdims), each reshaped to [-1] into graph outputs
    `T_ReduceMin` / `T_ReduceMax` (the names its `compute_data` reads back), placed just before T's first
    consumer; saved to the calibrator's augmented-model path."""
    import uuid

    import onnx
    from onnx import helper, numpy_helper

    model = calibrator.model
    tensors, value_infos = calibrator.select_tensors_to_calibrate(model)
    flat = str(uuid.uuid4())
    model.graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), flat))
    nodes = list(model.graph.node)
    first_consumer: dict[str, int] = {}
    for index, node in enumerate(nodes):
        for name in node.input:
            first_consumer.setdefault(name, index)
    before: dict[int, list[Any]] = {}
    outputs = []
    for tensor in tensors:
        if tensor not in value_infos:
            raise ValueError(f"no type known for tensor {tensor!r}: run shape inference before quantising")
        element_type = value_infos[tensor].type.tensor_type.elem_type
        for op in ("ReduceMin", "ReduceMax"):
            reduced = f"{tensor}_{op}"
            kept = f"{reduced}_Reshape"
            before.setdefault(first_consumer.get(tensor, len(nodes)), []).extend(
                [
                    helper.make_node(op, [tensor], [kept], keepdims=1, name=reduced),
                    helper.make_node("Reshape", [kept, flat], [reduced], name=kept),
                ]
            )
            outputs.append(helper.make_tensor_value_info(reduced, element_type, [None]))
    ordered: list[Any] = []
    for index, node in enumerate(nodes):
        ordered.extend(before.get(index, ()))
        ordered.append(node)
    ordered.extend(before.get(len(nodes), ()))
    del model.graph.node[:]
    model.graph.node.extend(ordered)
    model.graph.output.extend(outputs)
    onnx.save(
        model, calibrator.augmented_model_path, save_as_external_data=calibrator.use_external_data_format
    )


def write_ranges(model: Path, config: Any, feeds: Sequence[Feed], cache: Path, work_dir: Path) -> None:
    """MinMax ranges of `model`'s activations over `feeds`, for the tensors `config` (a
    StaticQuantConfig) quantises, written to `cache` in onnxruntime's calibration-cache format. One
    feed at a time: only one call's reductions are held."""
    from onnxruntime.quantization.calibrate import save_tensors_data

    extra = config.extra_options or {}
    options = {argument: extra[key] for key, argument in CALIBRATOR_OPTIONS.items() if key in extra}
    calibrator = _lean_calibrator_class()(
        model,
        config.op_types_to_quantize,
        augmented_model_path=str(work_dir / "augmented.onnx"),
        use_external_data_format=config.use_external_data_format,
        **options,
    )
    calibrator.augment_graph()
    calibrator.create_inference_session()
    for feed in feeds:
        calibrator.collect_data(FeedReader([feed]))
    save_tensors_data(calibrator.compute_data(), cache)


def quantize_with_ranges(
    model: Path, output: Path, config: Any, feeds: Sequence[Feed], work_dir: Path
) -> None:
    """`onnxruntime.quantization.quantize(model, output, config)`, calibrated by `write_ranges`."""
    from onnxruntime.quantization import quantize_static

    cache = work_dir / "activation_ranges.json"
    write_ranges(model, config, feeds, cache, work_dir)
    # what `quantize` passes on from a StaticQuantConfig: its fields are named as quantize_static's parameters
    settings = {
        name: getattr(config, name)
        for name in inspect.signature(quantize_static).parameters
        if hasattr(config, name) and name != "calibration_data_reader"
    }
    with quantiser_index.indexed_renames(config.extra_options):  # the same graph, without a scan per tensor
        quantize_static(str(model), str(output), None, calibration_cache_path=cache, **settings)
