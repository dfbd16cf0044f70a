"""The decoder's relative-position shift as data movement, for graphs compiled for the NPU.

Each attention layer of the exported Zipformer turns its positional scores `P` (rows of length
n = 2T − 1, heads × T rows) into `out[r, j] = P[r, T − 1 − (r mod T) + j]` with a `GatherElements` over
an int64 index the graph builds from `Range`/`Expand`/`Tile`/`Unsqueeze`/`Add`. Once shapes are static
that index is a constant of heads × T × T values: 138 MB in each of the six full-rate layers at
T = 2079, which QNN has to carry into its compiled context. The same values follow from pure data
movement: per head, flatten the T × n block, start at T − 1, read T rows of stride n − 1 and keep the
first T columns (a `Reshape`, a `Slice`, a `Reshape`, a `Slice`; no index). On the CPU the rewrite was
bit-identical to the exported graph and no faster (1.00–1.04×), so only the NPU path applies it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CONSTANTS = {"one": 1, "one_1d": [1], "zero_1d": [0], "minus_one_1d": [-1], "axis0": [0], "axis1": [1]}


def rewrite_relative_shift(graph: Any) -> int:
    """Replace every `GatherElements(P, rows + cols)` of the rel-shift pattern (in place); the count."""
    from onnx import numpy_helper

    producer = {output: node for node in graph.node for output in node.output}
    replacements: dict[int, list[Any]] = {}
    for position, gather in enumerate(graph.node):
        if gather.op_type != "GatherElements":
            continue
        bounds = _shift_bounds(gather, producer)
        if bounds is not None:
            replacements[position] = _slices(gather, *bounds)
    if not replacements:
        return 0
    nodes: list[Any] = []
    for position, node in enumerate(graph.node):
        nodes.extend(replacements.get(position, [node]))
    del graph.node[:]
    graph.node.extend(nodes)
    for name, value in CONSTANTS.items():
        graph.initializer.append(numpy_helper.from_array(np.array(value, np.int64), f"relshift_{name}"))
    return len(replacements)


def _shift_bounds(gather: Any, producer: dict[str, Any]) -> tuple[str, str] | None:
    """(T − 1, T) tensor names when `gather`'s index is `Unsqueeze(Tile(Expand(Range(T−1, …)))) +
    Range(0, T)`, the exporter's rel-shift; None for any other GatherElements."""
    add = producer.get(gather.input[1])
    if add is None or add.op_type != "Add":
        return None
    rows, cols = (producer.get(name) for name in add.input)
    if rows is None or cols is None or rows.op_type != "Unsqueeze" or cols.op_type != "Range":
        return None
    tile = producer.get(rows.input[0])
    expand = producer.get(tile.input[0]) if tile is not None and tile.op_type == "Tile" else None
    rows_range = producer.get(expand.input[0]) if expand is not None and expand.op_type == "Expand" else None
    if rows_range is None or rows_range.op_type != "Range":
        return None
    return rows_range.input[0], cols.input[1]


def _slices(gather: Any, last_row: str, width: str) -> list[Any]:
    """Nodes computing `gather`'s output from its data; `last_row` = T − 1, `width` = T (int64)."""
    from onnx import helper

    prefix = f"{gather.name}_slices/"
    const = {name: f"relshift_{name}" for name in CONSTANTS}

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> Any:
        return helper.make_node(op, inputs, [output], **attributes)

    return [
        node("Shape", [gather.input[0]], prefix + "shape"),
        node("Gather", [prefix + "shape", const["one_1d"]], prefix + "n", axis=0),
        node("Add", [last_row, const["one"]], prefix + "time"),
        node("Unsqueeze", [prefix + "time", const["axis0"]], prefix + "time_1d"),
        node("Mul", [prefix + "time_1d", prefix + "n"], prefix + "block"),
        node("Concat", [const["minus_one_1d"], prefix + "block"], prefix + "flat_shape", axis=0),
        node("Reshape", [gather.input[0], prefix + "flat_shape"], prefix + "flat"),
        node("Sub", [prefix + "n", const["one_1d"]], prefix + "stride"),
        node("Unsqueeze", [last_row, const["axis0"]], prefix + "start"),
        node("Mul", [prefix + "time_1d", prefix + "stride"], prefix + "length"),
        node("Add", [prefix + "start", prefix + "length"], prefix + "end"),
        node(
            "Slice", [prefix + "flat", prefix + "start", prefix + "end", const["axis1"]], prefix + "strided"
        ),
        node("Concat", [const["minus_one_1d"], prefix + "stride"], prefix + "rows_shape", axis=0),
        node("Reshape", [prefix + "strided", prefix + "rows_shape"], prefix + "rows"),
        node("Unsqueeze", [width, const["axis0"]], prefix + "width"),
        node(
            "Slice", [prefix + "rows", const["zero_1d"], prefix + "width", const["axis1"]], gather.output[0]
        ),
    ]
