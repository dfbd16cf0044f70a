"""A small ONNX graph writer that names and lowers operations the way torch's TorchScript exporter does.

The real ZipVoice files were exported from PyTorch, so their graphs carry the exporter's habits: node names
from the module path (`/fm_decoder/1/downsample/Reshape_1`), small constants as `Constant` nodes, shapes read
with Shape → Gather, target shapes assembled with Unsqueeze → Concat, `expand` lowered through
ConstantOfShape/Equal/Where, weights of linear layers stored transposed for MatMul. Writing the synthetic model
with the same habits gives onnxruntime (and QNN) the same graph patterns to optimise, fold and place.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as oh

OPSET = 13
FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
BOOL = TensorProto.BOOL
INT64_MAX = np.iinfo(np.int64).max

Dim = int | str
"""A dimension in a target shape: a Python int (a constant) or the name of a 0-d int64 tensor."""


class Tracer:
    """Collects nodes and initializers; every op returns the name of its (first) output."""

    def __init__(self, seed: int) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)
        self._scopes: list[str] = []
        self._counts: dict[tuple[str, str], int] = {}
        self._global = 0

    # --- naming ---------------------------------------------------------------------------------------
    @contextmanager
    def scope(self, *names: str) -> Iterator[None]:
        """Nest node names under module names, like the exporter's `/parent/child/Op_k`."""
        self._scopes.extend(names)
        try:
            yield
        finally:
            del self._scopes[len(self._scopes) - len(names) :]

    def scope_name(self) -> str:
        return "/" + "/".join(self._scopes) if self._scopes else ""

    def global_name(self, kind: str) -> str:
        """A module-less name like the exporter's `onnx::MatMul_123`."""
        self._global += 1
        return f"{kind}_{self._global}"

    def _node_name(self, op_type: str) -> str:
        prefix = self.scope_name()
        count = self._counts.get((prefix, op_type), 0)
        self._counts[(prefix, op_type)] = count + 1
        return f"{prefix}/{op_type}" + (f"_{count}" if count else "")

    def op(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any) -> str:
        return self.ops(op_type, inputs, outputs, **attrs)[0]

    def ops(self, op_type: str, inputs: Sequence[str], outputs: int, **attrs: Any) -> list[str]:
        name = self._node_name(op_type)
        names = [f"{name}_output_{k}" for k in range(outputs)]
        self.nodes.append(oh.make_node(op_type, list(inputs), names, name=name, **attrs))
        return names

    def output(self, op_type: str, inputs: Sequence[str], name: str, **attrs: Any) -> str:
        """A node whose output is a graph output (named by the signature, not by the node)."""
        self.nodes.append(oh.make_node(op_type, list(inputs), [name], name=self._node_name(op_type), **attrs))
        return name

    # --- constants and parameters -----------------------------------------------------------------------
    def const(self, value: Any, dtype: Any = None) -> str:
        """A `Constant` node in the current scope (python ints → int64, floats → float32)."""
        array = np.asarray(value, dtype=dtype)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        if array.dtype.kind in "iu":
            array = array.astype(np.int64)
        return self.op("Constant", [], value=numpy_helper.from_array(array))

    def axes(self, *values: int) -> str:
        """The exporter's module-less `onnx::Unsqueeze_N` axes constants."""
        name = self.global_name("onnx::Unsqueeze")
        array = np.asarray(values, dtype=np.int64)
        node = oh.make_node("Constant", [], [name], name=name.replace("onnx::Unsqueeze", "Constant"))
        node.attribute.append(oh.make_attribute("value", numpy_helper.from_array(array)))
        self.nodes.append(node)
        return name

    def param(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    def random(self, shape: Sequence[int], std: float) -> np.ndarray:
        return (self.rng.standard_normal(tuple(shape)) * std).astype(np.float32)

    def matmul_weight(self, d_in: int, d_out: int, gain: float = 1.0) -> str:
        return self.param(
            self.global_name("onnx::MatMul"), self.random((d_in, d_out), gain / math.sqrt(d_in))
        )

    # --- torch-like helpers -------------------------------------------------------------------------------
    def size(self, x: str, axis: int) -> str:
        """`x.size(axis)`: a 0-d int64 tensor."""
        return self.op("Gather", [self.op("Shape", [x]), self.const(axis)], axis=0)

    def shape_of(self, dims: Sequence[Dim], scoped: bool = False) -> str:
        """A 1-D int64 shape from ints and 0-d tensors (Unsqueeze + Concat, as exported).

        The exporter takes the Unsqueeze axes from module-less constants for view/reshape and from the
        module's own constants for expand (`scoped`)."""
        parts = []
        for d in dims:
            if isinstance(d, int):
                parts.append(self.const([d]))
            else:
                axes = self.const([0]) if scoped else self.axes(0)
                parts.append(self.op("Unsqueeze", [d, axes]))
        return self.op("Concat", parts, axis=0)

    def reshape(self, x: str, dims: Sequence[Dim]) -> str:
        return self.op("Reshape", [x, self.shape_of(dims)])

    def unsqueeze(self, x: str, axis: int) -> str:
        return self.op("Unsqueeze", [x, self.const([axis])])

    def slice(self, x: str, axis: int, start: Dim, end: Dim, step: int = 1) -> str:
        """`x[start:end]` on one axis; 0-d tensor bounds are unsqueezed first."""

        def bound(value: Dim) -> str:
            return (
                self.const([value])
                if isinstance(value, int)
                else self.op("Unsqueeze", [value, self.const([0])])
            )

        axes = self.const([axis])
        return self.op("Slice", [x, bound(start), bound(end), axes, self.const([step])])

    def chunk(self, x: str, parts: int, axis: int = 2) -> list[str]:
        """`x.chunk(parts, dim=axis)` with the exporter's size arithmetic (Shape/Gather/Add/Div/Mul/Slice)."""
        axes = self.const([axis])
        width = self.op("Gather", [self.op("Shape", [x]), axes], axis=0)
        start = self.const([0])
        step = self.op("Div", [self.op("Add", [width, self.const([parts - 1])]), self.const([parts])])
        out = []
        for k in range(1, parts + 1):
            end = self.op("Mul", [step, self.const([k])])
            out.append(self.op("Slice", [x, start, end, axes]))
            start = end
        return out

    def expand(self, x: str, dims: Sequence[Dim]) -> str:
        """`x.expand(*dims)` (−1 keeps a size): Reshape(−1) then the exporter's −1 → 1 replacement."""
        shape = self.op("Reshape", [self.shape_of(dims, scoped=True), self.const([-1])])
        ones = self.op("ConstantOfShape", [self.op("Shape", [shape])], value=int64_one())
        minus_one = self.op("Mul", [ones, self.const(-1)])
        target = self.op("Where", [self.op("Equal", [shape, minus_one]), ones, shape])
        return self.op("Expand", [x, target])

    def linear(self, x: str, d_in: int, d_out: int, prefix: str, gain: float = 1.0, bias: bool = True) -> str:
        """nn.Linear on a 3-D input: MatMul with the transposed weight, then Add(bias, ·)."""
        y = self.op("MatMul", [x, self.matmul_weight(d_in, d_out, gain)])
        if not bias:
            return y
        b = self.param(f"{prefix}.bias", self.random((d_out,), 0.02))
        return self.op("Add", [b, y])

    def gemm(self, x: str, d_in: int, d_out: int, prefix: str) -> str:
        """nn.Linear on a 2-D input: Gemm with transB."""
        w = self.param(f"{prefix}.weight", self.random((d_out, d_in), 1.0 / math.sqrt(d_in)))
        b = self.param(f"{prefix}.bias", self.random((d_out,), 0.02))
        return self.op("Gemm", [x, w, b], alpha=1.0, beta=1.0, transB=1)

    def make_model(self, name: str, inputs: list, outputs: list, metadata: dict[str, str]) -> onnx.ModelProto:
        graph = oh.make_graph(self.nodes, name, inputs, outputs, initializer=self.initializers)
        model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", OPSET)], producer_name="npu-worker")
        model.ir_version = 7
        for key, value in metadata.items():
            model.metadata_props.add(key=key, value=value)
        return model


def int64_one() -> onnx.TensorProto:
    return numpy_helper.from_array(np.ones(1, np.int64))
