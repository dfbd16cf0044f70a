"""A small decoder graph with ZipVoice's exact decoder signature, built with onnx.helper for QNN tests.

Inputs `t` [] , `x` / `text_condition` / `speech_condition` [N, T, 100], `guidance_scale` [] → `v`
[N, T, 100], free dims "N" and "T" as in the real export. Only ops the HTP simulator compiles
(MatMul, Add, Mul, Tanh), so the QNN path is tested on its own, independent of the synthetic model's
graph (whose Sub-then-Mul pattern the simulator fails to finalise: QNN_COMMON_ERROR_MEM_ALLOC).
`cpu_only=True` uses only ops QNN has no kernel for: it shows the "took no nodes" fallback.
`partial=True` puts one such op (Sinh) in the middle: QNN takes the rest in two partitions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write_simple_decoder(
    path: Path, feat_dim: int = 100, cpu_only: bool = False, seed: int = 0, partial: bool = False
) -> Path:
    rng = np.random.default_rng(seed)
    weights = [
        numpy_helper.from_array((rng.standard_normal((feat_dim, feat_dim)) * 0.1).astype(np.float32), name)
        for name in ("w_x", "w_text", "w_speech")
    ]
    weights.append(numpy_helper.from_array((rng.standard_normal(feat_dim) * 0.1).astype(np.float32), "bias"))
    weights.append(numpy_helper.from_array(np.array(0.1, dtype=np.float32), "tenth"))
    frames = ["N", "T", feat_dim]
    inputs = [helper.make_tensor_value_info("t", TensorProto.FLOAT, [])]
    inputs += [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, frames)
        for name in ("x", "text_condition", "speech_condition")
    ]
    inputs += [helper.make_tensor_value_info("guidance_scale", TensorProto.FLOAT, [])]
    if cpu_only:  # Sinh and Softsign have no QNN implementation
        nodes = [helper.make_node("Sinh", ["x"], ["h"]), helper.make_node("Softsign", ["h"], ["v"])]
        weights = []
    else:
        nodes = [
            helper.make_node("MatMul", ["x", "w_x"], ["hx"]),
            helper.make_node("MatMul", ["text_condition", "w_text"], ["ht"]),
            helper.make_node("MatMul", ["speech_condition", "w_speech"], ["hs"]),
            helper.make_node("Add", ["hx", "ht"], ["h1"]),
            helper.make_node("Add", ["h1", "hs"], ["h2"]),
            helper.make_node("Mul", ["bias", "t"], ["tb"]),
            helper.make_node("Add", ["h2", "tb"], ["h3"]),
            helper.make_node("Tanh", ["h3"], ["h4"]),
            helper.make_node("Mul", ["guidance_scale", "tenth"], ["g"]),
            helper.make_node("Mul", ["h4", "g"], ["h5"]),
            helper.make_node("Add", ["h4", "h5"], ["v"]),
        ]
        if partial:  # Tanh → Sinh (CPU) → the rest
            nodes[7] = helper.make_node("Tanh", ["h3"], ["h4t"])
            nodes.insert(8, helper.make_node("Sinh", ["h4t"], ["h4"]))
    output = helper.make_tensor_value_info("v", TensorProto.FLOAT, frames)
    graph = helper.make_graph(nodes, "fm_decoder", inputs, [output], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    metadata = {
        "feat_dim": str(feat_dim),
        "sample_rate": "24000",
        "n_fft": "1024",
        "hop_length": "256",
        "window_length": "1024",
        "num_mels": "100",
        "comment": "ZipVoice-Distill test decoder (npu-worker tests)",
    }
    for key, value in metadata.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))
    return path
