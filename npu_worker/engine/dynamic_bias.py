"""A zero bias after each dynamically quantised MatMul whose result is added to a computed tensor.

The int8 files quantise activations at run time: `DynamicQuantizeLinear → MatMulInteger → Cast → Mul`
(the output scale). QNN has no kernel for either of the first two; its EP takes the chain only through
its own fusion, which reads the `Add` consuming the `Mul` as the MatMul's bias and rejects the chain
when that `Add`'s other input is not a constant ("DQMatMulIntegerFusion rejected: Bias is not a constant
initializer", verbose log, onnxruntime-qnn 2.7). In the decoder that is the guidance-scale embedding,
added to the time embedding's sinusoids: the pair stayed on the CPU and split the graph in three.
An `Add` of zeros between the two gives the fusion the constant bias it wants and changes no value.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def add_zero_biases(graph: Any) -> int:
    """Insert `Add(scaled, zeros[width])` after each such output-scale `Mul` (in place); the count."""
    from onnx import helper, numpy_helper

    constants = {tensor.name: tensor for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    nodes: list[Any] = []
    added = 0
    for node in graph.node:
        nodes.append(node)
        width = _matmul_width(node, producer, constants)
        scaled = node.output[0] if node.output else ""
        if width is None or not any(
            user.op_type == "Add" and any(name != scaled and name not in constants for name in user.input)
            for user in consumers.get(scaled, [])
        ):
            continue
        zeros = numpy_helper.from_array(np.zeros([width], np.float32), f"{scaled}_zero_bias")
        graph.initializer.append(zeros)
        biased = f"{scaled}_biased"
        for user in consumers[scaled]:
            for index, name in enumerate(user.input):
                if name == scaled:
                    user.input[index] = biased
        nodes.append(helper.make_node("Add", [scaled, zeros.name], [biased], name=f"{node.name}_zero_bias"))
        added += 1
    if added:
        del graph.node[:]
        graph.node.extend(nodes)
    return added


def _matmul_width(node: Any, producer: dict[str, Any], constants: dict[str, Any]) -> int | None:
    """The output width when `node` is the float `Mul` after `MatMulInteger → Cast` with constant
    weights; None otherwise."""
    if node.op_type != "Mul":
        return None
    for name in node.input:
        cast = producer.get(name)
        matmul = producer.get(cast.input[0]) if cast is not None and cast.op_type == "Cast" else None
        if matmul is not None and matmul.op_type == "MatMulInteger" and matmul.input[1] in constants:
            dims = constants[matmul.input[1]].dims
            return int(dims[-1]) if dims else None
    return None
