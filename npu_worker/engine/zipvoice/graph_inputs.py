"""An ONNX file's declared inputs, read from its graph: no onnxruntime session, no weights run.

`prepare` and a QNN `serve` opened a CPU session on the whole decoder to read two facts of its inputs
(its `x`'s symbolic batch and frame names, its mel bins): seconds and tens of MB for one dimension.
"""

from __future__ import annotations

from pathlib import Path

Dim = int | str | None  # a fixed size, a symbolic name, or neither


def declared_inputs(path: Path) -> list[tuple[str, list[Dim]]]:
    """(name, shape) of each input the graph takes from its caller, in a session's order (initializers
    listed as inputs, as old exports do, left out). Any error of `onnx.load` passes through: a file
    cut short is a protobuf DecodeError, a missing one an OSError."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    weights = {tensor.name for tensor in graph.initializer}
    return [
        (item.name, [_dim(d) for d in item.type.tensor_type.shape.dim])
        for item in graph.input
        if item.name not in weights
    ]


def _dim(dim: object) -> Dim:
    which = dim.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(dim, which) if which else None
