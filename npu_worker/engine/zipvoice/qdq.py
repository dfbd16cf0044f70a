"""A static QDQ decoder for the NPU's fixed-point path, made with onnxruntime's own QNN quantisation tools.

The official int8 files quantise activations at run time (`DynamicQuantizeLinear` → `MatMulInteger`), which
is a CPU technique: HTP leaves part of it on the CPU and computes the rest 1.1e-2 away from the CPU. HTP's
fast path is static fixed point: QuantizeLinear/DequantizeLinear pairs around 8-bit weights and around
activations whose ranges were calibrated beforehand (`calibration.py`). `a16w8` keeps activations at 16
bits (the usual choice where 8 lose too much), `a8w8` at 8.

Per bucket: the specialised static graph (`specialize.py`, Swoosh guards rewritten first: their `+inf`
constant cannot be quantised, `swoosh.py`), onnxruntime's QNN pre-processing (`qnn_preprocess_model`:
fusions QNN has kernels for), its QNN QDQ configuration (`get_qnn_qdq_config`: the overrides QNN needs,
e.g. 8-bit weights next to 16-bit activations in MatMul and LayerNorm, fixed Sigmoid/Tanh output scales),
MinMax calibration on the recorded feeds (`activation_ranges.py`: onnxruntime's calibrator, run in an
order that holds one activation at a time), and `quantize_static`. The graph's own input Quantize and output
Dequantize nodes run on the CPU beside QNN by design (`boundary_names`).

Two parts stay in float (fp16 on HTP), found by measurement on the HTP simulator:
- the time and guidance embeddings, the nodes that depend only on the scalar inputs `t` and
  `guidance_scale` (`scalar_branch`, 46-49 nodes of a few hundred values). Quantised to 16 bits, HTP
  moved the whole velocity 14.7 % (relative L2) from fp32 while the same QDQ graph on the CPU stayed
  within 0.97 % (small export, 383 frames, random inputs; intermediate tensors made graph outputs on QNN
  and on the CPU: the first to diverge was the time embedding's Gemm);
- the Swoosh activations' softplus, every `Clip`, `Exp`, `Log` and `Max` node (`FLOAT_OPS`; in this
  decoder they are only that, after `swoosh.py`'s rewrite). Quantised, HTP was 2.4-2.8 % from fp32 per
  call on real recorded calls (generated tiny model) against 0.27-0.47 % for the same graph on the CPU;
  kept in float, HTP comes within 0.28-0.47 %, the CPU's own figures.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npu_worker.engine import specialize
from npu_worker.engine.zipvoice import activation_ranges, swoosh

log = logging.getLogger(__name__)

Feed = activation_ranges.Feed
FRAME_INPUTS = ("x", "text_condition", "speech_condition")
FLOAT_OPS = ("Clip", "Exp", "Log", "Max")  # the Swoosh softplus: quantised, HTP drifts from the CPU
# --precision → (activation bits, weight bits)
QUANTISED = {"a16w8": (16, 8), "a8w8": (8, 8)}


def is_quantised(precision: str) -> bool:
    return precision in QUANTISED


def _quant_type(bits: int) -> Any:
    from onnxruntime.quantization import QuantType

    return QuantType.QUInt16 if bits == 16 else QuantType.QUInt8


@contextlib.contextmanager
def qdq_graph(
    decoder: Path,
    dims: dict[str, int],
    precision: str,
    feeds: Sequence[Feed],
    work_dir: Path,
    notes: dict[str, Any] | None = None,
) -> Iterator[Path]:
    """The decoder specialised to `dims` and statically quantised to `precision`, as a temporary file
    (`notes`: when specialising ended, the nodes kept in float; for the manifest)."""
    import onnx
    from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

    activation_bits, weight_bits = QUANTISED[precision]
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(_scratch(work_dir)))
        rewritten = _rewritten(decoder, scratch)
        static = stack.enter_context(specialize.static_graph(rewritten, dims, scratch))
        notes = {} if notes is None else notes
        notes["specialised"] = time.monotonic()
        preprocessed, metadata = _preprocessed(static, scratch)
        _refuse_unscalable(onnx.load(str(preprocessed), load_external_data=False), decoder.name)
        in_float = _kept_in_float(preprocessed)
        notes["kept_in_float"] = len(in_float)
        config = get_qnn_qdq_config(
            str(preprocessed),
            activation_ranges.FeedReader(feeds),
            activation_type=_quant_type(activation_bits),
            weight_type=_quant_type(weight_bits),
            stride=1,
            nodes_to_exclude=in_float,
        )
        quantised = scratch / f"{precision}.onnx"
        activation_ranges.quantize_with_ranges(preprocessed, quantised, config, feeds, scratch)
        result = onnx.load(str(quantised))
        onnx.helper.set_model_props(result, metadata)
        onnx.save(result, str(quantised))
        yield quantised


def _rewritten(decoder: Path, scratch: Path) -> Path:
    """The decoder with its guard rewrite (swoosh.py), written into `scratch` for the specialiser; the
    decoder itself where it has no guard to rewrite (swoosh's None: onnx is there, `qdq_graph` imported
    it), which was refused as "the graph could not be read for quantisation"."""
    graph = swoosh.rewritten_model(decoder)
    if graph is None:
        return decoder
    rewritten = scratch / "rewritten.onnx"
    rewritten.write_bytes(graph)
    return rewritten


def _preprocessed(static: Path, scratch: Path) -> tuple[Path, dict[str, str]]:
    """QNN's preprocessing of the specialised graph (the graph as it is where it changes nothing), and
    the metadata taken off it first: onnxruntime 1.32's qnn_preprocess_model fails on a model with
    metadata (it updates a dict from the repeated metadata entries); it goes back on the quantised one."""
    import onnx
    from onnxruntime.quantization.execution_providers.qnn import qnn_preprocess_model

    model = onnx.load(str(static))
    metadata = {entry.key: entry.value for entry in model.metadata_props}
    del model.metadata_props[:]
    plain = scratch / "static.onnx"
    onnx.save(model, str(plain))
    del model
    preprocessed = scratch / "preprocessed.onnx"
    if not qnn_preprocess_model(str(plain), str(preprocessed)):
        preprocessed = plain
    return preprocessed, metadata


def refuse_unscalable_decoder(decoder: Path) -> None:
    """`_refuse_unscalable` on the decoder as `qdq_graph` quantises it (its guards rewritten), once,
    before calibrating: the refusal came per bucket, after the calibration's minutes. Only constants
    every bucket's graph keeps are judged (`_kept_reads`): one that specialising folds away or drops was
    refused here, a `prepare` that every bucket passed. (Each bucket's graph is checked again: what the
    specialiser wrote is what is quantised.) Rewritten in place, without its weights' bytes copied."""
    import onnx

    try:
        proto = onnx.load(str(decoder), load_external_data=False)
        swoosh.rewrite_guards(proto.graph)
    except Exception:  # (a file it cannot read: the calibration's engine load says what is wrong with it)
        return
    _refuse_unscalable(proto, decoder.name, _kept_reads(proto.graph))


def _kept_reads(graph: Any) -> set[str]:
    """Names read by the nodes a bucket's specialised graph keeps: those fed by a graph input other than
    through its shape (`specialize.fold_static_values` makes the rest constants) and on the way to an
    output (onnxslim drops the others). An If's body is not followed: what that misses is refused per
    bucket, never refused falsely here."""
    initializers = {tensor.name for tensor in graph.initializer}
    varying = {value.name for value in graph.input if value.name not in initializers}
    kept = []
    for node in graph.node:  # ONNX graphs are topologically sorted
        if node.op_type in specialize.RANDOM_OPS or (
            node.op_type not in specialize.SHAPE_OPS and any(name in varying for name in node.input)
        ):
            varying.update(node.output)
            kept.append(node)
    needed = {value.name for value in graph.output}
    for node in reversed(graph.node):
        if any(name in needed for name in node.output):
            needed.update(node.input)
    return {name for node in kept if any(out in needed for out in node.output) for name in node.input}


def _refuse_unscalable(proto: Any, decoder: str, read: set[str] | None = None) -> None:
    """ValueError where a node of `proto` (an onnx ModelProto) reads a constant that is not finite (the
    `+inf` of a Swoosh guard the rewrite did not recognise): the quantiser scales it by infinity, a NaN
    once dequantised, and the guard was silently gone from the compiled graph. `read`: the names that
    count as read (every node's inputs where None)."""
    import onnx
    from onnx import numpy_helper

    if read is None:
        read = {name for node in proto.graph.node for name in node.input}
    tensors = [(tensor.name, tensor) for tensor in proto.graph.initializer]
    tensors += [
        (node.output[0], attribute.t)
        for node in proto.graph.node
        if node.op_type == "Constant"
        for attribute in node.attribute
        if attribute.name == "value"
    ]
    unscalable = [
        name
        for name, tensor in tensors
        if name in read
        and tensor.data_location != onnx.TensorProto.EXTERNAL  # (a weight's bytes, never a guard's)
        and (value := numpy_helper.to_array(tensor)).dtype.kind == "f"
        and not np.isfinite(value).all()
    ]
    if unscalable:
        raise ValueError(
            f"{decoder}: {len(unscalable)} constant(s) that are not finite ({', '.join(unscalable[:3])}: "
            "an overflow guard the Swoosh rewrite does not recognise) cannot be quantised; prepare it "
            "with --precision fp32"
        )


def _kept_in_float(graph: Path) -> list[str]:
    """The nodes the quantiser leaves in float: the scalar time branch and the `FLOAT_OPS`."""
    import onnx

    graph_proto = onnx.load(str(graph), load_external_data=False)
    return scalar_branch(graph_proto) + [
        node.name for node in graph_proto.graph.node if node.op_type in FLOAT_OPS
    ]


@contextlib.contextmanager
def _scratch(work_dir: Path) -> Iterator[str]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="qdq-", dir=work_dir) as path:
        yield path


def scalar_branch(model: Any, frame_inputs: tuple[str, ...] = FRAME_INPUTS) -> list[str]:
    """Names of the nodes that depend on none of the per-frame inputs (only on `t`, `guidance_scale`
    and constants), in graph order: the time and guidance embeddings."""
    reached = set(frame_inputs)
    branch = []
    for node in model.graph.node:  # ONNX graphs are topologically sorted
        if any(name in reached for name in node.input):
            reached.update(node.output)
        else:
            branch.append(node.name)
    return branch


def boundary_names(graph: Path) -> set[str]:
    """Nodes a QDQ graph keeps on the CPU by design: the Quantize of each graph input and the Dequantize
    of each graph output (the engine feeds and reads float tensors)."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    inputs = {value.name for value in model.graph.input}
    outputs = {value.name for value in model.graph.output}
    return {
        node.name
        for node in model.graph.node
        if (node.op_type == "QuantizeLinear" and node.input[0] in inputs)
        or (node.op_type == "DequantizeLinear" and node.output[0] in outputs)
    }


def boundary_on_cpu(session: Any, names: set[str]) -> int:
    """How many of the boundary nodes `names` the session really runs on the CPU."""
    return sum(
        1
        for part in session.get_provider_graph_assignment_info()
        if part.ep_name == "CPUExecutionProvider"
        for node in part.get_nodes()
        if node.name in names
    )


def relative_l2(reference: np.ndarray, other: np.ndarray) -> float:
    """‖other − reference‖ / ‖reference‖ (0 when both are zero)."""
    scale = float(np.linalg.norm(reference))
    difference = float(np.linalg.norm(np.asarray(other, dtype=np.float64) - reference))
    return difference / scale if scale else difference


def log_mel_distance(reference: np.ndarray, other: np.ndarray, config: Any) -> float:
    """Relative L2 distance of two signals' log-mel spectrograms (`features.log_mel`, SpectrumConfig
    `config`), over the frames both have: how far a whole sentence moved, as one number."""
    from npu_worker.engine.zipvoice.features import log_mel

    a, b = log_mel(reference, config), log_mel(other, config)
    frames = min(len(a), len(b))
    return relative_l2(a[:frames], b[:frames])
