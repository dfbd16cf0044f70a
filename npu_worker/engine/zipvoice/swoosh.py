"""A cheaper, equal form of the exported Swoosh activations' overflow guard, applied when a graph loads.

Zipformer's SwooshL/SwooshR compute `softplus(x − c) − 0.08·x − k`; the PyTorch export lowers the softplus
to `L = log(1 + exp(s))` with a guard `Where(L == +inf, s, L)` for the exp overflowing. On the CPU that
`Where` alone took 14 % of a full-size int8 decoder call (onnxruntime's profile at 1000 frames), more
than any op but the matrix products, and the `Equal` before it another 1 %. This rewrite keeps every
other node and replaces the guard by two cheap element-wise ops with the same result:

    Exp(Clip(s, max=80)) …  L  … Max(L, s)

(`Clip` rather than `Min(s, 80)`: the same values, and onnxruntime's CPU `Clip` takes half the time of
its broadcasting `Min`; graphs below opset 11, whose `Clip` has no tensor bounds, get `Min`.)

For s ≤ 80 the exp and the log are computed from the same s as before, so L is bit-identical, and
`Max(L, s)` is L (log(1 + eᔆ) ≥ s) except where rounding put L one ulp below s (s ≳ 16, where both are s
to float precision). Above 80 — where the guard used to switch to s — L is 80 and the Max gives s. The
decoder's outputs are therefore equal to the untouched graph's (benchmarks/decoder_session.py measures
the difference and the time). Only CPU/CUDA sessions get it; QNN compiles the graph as exported.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

EXP_LIMIT = 80.0  # below float32's exp overflow (88.7); log(1 + e^80) is 80 in float32
_LIMIT_NAME = "swoosh_guard_exp_limit"


def rewritten_model(path: Path, clip: bool | None = None) -> bytes | None:
    """The model at `path` with every Swoosh overflow guard replaced, serialised for onnxruntime;
    None when there is nothing to rewrite or the `onnx` package is missing (the file is used as is).
    `clip`: see `rewrite_guards`; None chooses by the graph's opset."""
    try:
        import onnx
    except ImportError:
        log.info("onnx not installed: %s runs with its Where guards (pip install onnx)", path.name)
        return None
    model = onnx.load(str(path))
    if clip is None:
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
        clip = opset >= 11
    count = rewrite_guards(model.graph, clip=clip)
    if not count:
        return None
    bound = "Clip" if clip else "Min"
    log.info("%s: %d softplus overflow guards rewritten (Where -> %s/Max)", path.name, count, bound)
    return bytes(model.SerializeToString())


def rewrite_guards(graph: Any, clip: bool = True) -> int:
    """Rewrite the guards in `graph` (an onnx GraphProto) in place; returns how many. `clip`: bound
    the exp's input with `Clip` (opset ≥ 11), else with `Min`."""
    from onnx import helper, numpy_helper

    constants = _Constants(graph)
    producer = {out: node for node in graph.node for out in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    limits: dict[int, Any] = {}  # id(Exp node) -> the Clip/Min node to put before it
    dropped: set[int] = set()
    for where in [n for n in graph.node if n.op_type == "Where"]:
        match = _match_guard(where, producer, constants, uses)
        if match is None:
            continue
        equal, exp, guarded = match
        clamped = f"{exp.name or exp.output[0]}_limited"
        if clip:
            bound = helper.make_node("Clip", [guarded, "", _LIMIT_NAME], [clamped], name=clamped)
        else:
            bound = helper.make_node("Min", [guarded, _LIMIT_NAME], [clamped], name=clamped)
        limits[id(exp)] = bound
        exp.input[0] = clamped
        log_value = where.input[2]
        where.op_type = "Max"
        del where.input[:]
        where.input.extend([log_value, guarded])
        dropped.add(id(equal))
    if not limits:
        return 0
    nodes = []
    for node in graph.node:
        if id(node) in dropped:
            continue
        if id(node) in limits:
            nodes.append(limits[id(node)])
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.append(numpy_helper.from_array(np.array(EXP_LIMIT, dtype=np.float32), _LIMIT_NAME))
    return len(limits)


def _match_guard(
    where: Any, producer: dict, constants: _Constants, uses: dict
) -> tuple[Any, Any, str] | None:
    """(Equal, Exp, s) when `where` is Where(Equal(L, +inf), s, L) with L = log(1 + exp(s)), else None.
    L may pass through float→float Casts, as the exporter writes it."""
    condition, guarded, value = where.input
    equal = producer.get(condition)
    if equal is None or equal.op_type != "Equal" or uses.get(condition) != 1:
        return None
    if _skip_casts(equal.input[0], producer) != _skip_casts(value, producer):
        return None
    infinity = constants.get(equal.input[1])
    if infinity is None or not np.all(np.isposinf(infinity)):
        return None
    log_node = producer.get(_skip_casts(value, producer))
    if log_node is None or log_node.op_type != "Log":
        return None
    add = producer.get(log_node.input[0])
    if add is None or add.op_type != "Add":
        return None
    one = [constants.get(name) for name in add.input]
    others = [name for name, c in zip(add.input, one, strict=True) if c is None]
    if len(others) != 1 or not any(c is not None and c.size == 1 and float(c) == 1.0 for c in one):
        return None
    exp = producer.get(others[0])
    if exp is None or exp.op_type != "Exp" or exp.input[0] != guarded or uses.get(exp.output[0]) != 1:
        return None
    return equal, exp, guarded


def _skip_casts(name: str, producer: dict) -> str:
    """The tensor behind a chain of Casts to float32 (the exporter's no-op casts)."""
    node = producer.get(name)
    while node is not None and node.op_type == "Cast" and _cast_to(node) == 1:
        name = node.input[0]
        node = producer.get(name)
    return name


def _cast_to(node: Any) -> int | None:
    return next((attr.i for attr in node.attribute if attr.name == "to"), None)


class _Constants:
    """Initializer and Constant-node values by tensor name, converted to numpy only when asked: the
    guards' constants are scalars, and converting every weight of a full-size decoder would copy it all."""

    def __init__(self, graph: Any) -> None:
        self._tensors = {init.name: init for init in graph.initializer}
        for node in graph.node:
            if node.op_type == "Constant":
                for attr in node.attribute:
                    if attr.name == "value":
                        self._tensors[node.output[0]] = attr.t
        self._values: dict[str, np.ndarray] = {}

    def get(self, name: str) -> np.ndarray | None:
        from onnx import numpy_helper

        if name not in self._values:
            tensor = self._tensors.get(name)
            if tensor is None:
                return None
            self._values[name] = numpy_helper.to_array(tensor)
        return self._values[name]
