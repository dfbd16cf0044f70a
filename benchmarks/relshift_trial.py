"""Trial, not adopted: the decoder's relative-position shift as two slices instead of a GatherElements.

Each of the full-size decoder's 16 attention layers turns its positional scores `P` (rows of length
n = 2T − 1) into `out[r, j] = P[r, T − 1 − (r mod T) + j]` with a `GatherElements` over an int64 index
tensor that the graph builds anew every call (`Range`, `Expand`, `Tile`, `Unsqueeze`, `Add`: T × T × heads
int64 values). The same values follow from pure data movement: per head, flatten the T × n block, start
at T − 1, read T rows of stride n − 1, keep the first T columns — a `Reshape`, a `Slice`, a `Reshape` and a
`Slice`, no index tensor. This script applies that rewrite on top of the engine's Swoosh guard rewrite
(npu_worker/engine/zipvoice/swoosh.py), compares the outputs (relative L2 0 = bit-identical), and times both graphs on the
same random inputs, interleaved (CPU, `--threads`). Valid for T ≥ 2 in every stack (≥ 5 decoder frames).

    python benchmarks/relshift_trial.py --model-dir DIR --frames 199 501 891 --repeats 9 \\
        --json benchmarks/relshift_trial.json
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from npu_worker.engine.providers import RuntimeConfig, session_options
from npu_worker.engine.zipvoice import model_files
from npu_worker.engine.zipvoice.swoosh import rewrite_guards

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoder_session import measure, print_table, save_report, timing_report  # noqa: E402  (same inputs, loop, report)

_CONSTANTS = {"one": 1, "one_1d": [1], "zero_1d": [0], "minus_one_1d": [-1], "axis0": [0], "axis1": [1]}


def rewrite_relative_shift(graph: Any) -> int:
    """Replace every `GatherElements(P, rows + cols)` of the rel-shift pattern in `graph` (in place)."""
    from onnx import helper, numpy_helper

    producer = {out: node for node in graph.node for out in node.output}
    replacement: dict[int, list] = {}
    for gather in [n for n in graph.node if n.op_type == "GatherElements"]:
        add = producer.get(gather.input[1])
        if add is None or add.op_type != "Add":
            continue
        rows, cols = (producer.get(name) for name in add.input)
        if rows is None or cols is None or cols.op_type != "Range" or rows.op_type != "Unsqueeze":
            continue
        tile = producer.get(rows.input[0])
        expand = producer.get(tile.input[0]) if tile is not None else None
        rows_range = producer.get(expand.input[0]) if expand is not None else None
        if rows_range is None or rows_range.op_type != "Range":
            continue
        replacement[id(gather)] = _slice_nodes(helper, gather, rows_range.input[0], cols.input[1])
    if not replacement:
        return 0
    nodes = []
    for node in graph.node:
        nodes.extend(replacement.get(id(node), [node]))
    del graph.node[:]
    graph.node.extend(nodes)
    for name, value in _CONSTANTS.items():
        graph.initializer.append(numpy_helper.from_array(np.array(value, np.int64), f"relshift_{name}"))
    return len(replacement)


def _slice_nodes(helper: Any, gather: Any, last_row: str, width: str) -> list:
    """Nodes computing gather's output from its data: `last_row` = T − 1, `width` = T (int64 scalars)."""
    p = f"{gather.name}_slices/"
    c = {name: f"relshift_{name}" for name in _CONSTANTS}
    node = helper.make_node
    return [
        node("Shape", [gather.input[0]], [p + "shape"]),
        node("Gather", [p + "shape", c["one_1d"]], [p + "n"], axis=0),
        node("Add", [last_row, c["one"]], [p + "time"]),
        node("Unsqueeze", [p + "time", c["axis0"]], [p + "time_1d"]),
        node("Mul", [p + "time_1d", p + "n"], [p + "block"]),
        node("Concat", [c["minus_one_1d"], p + "block"], [p + "flat_shape"], axis=0),
        node("Reshape", [gather.input[0], p + "flat_shape"], [p + "flat"]),
        node("Sub", [p + "n", c["one_1d"]], [p + "stride"]),
        node("Unsqueeze", [last_row, c["axis0"]], [p + "start"]),
        node("Mul", [p + "time_1d", p + "stride"], [p + "length"]),
        node("Add", [p + "start", p + "length"], [p + "end"]),
        node("Slice", [p + "flat", p + "start", p + "end", c["axis1"]], [p + "strided"]),
        node("Concat", [c["minus_one_1d"], p + "stride"], [p + "rows_shape"], axis=0),
        node("Reshape", [p + "strided", p + "rows_shape"], [p + "rows"]),
        node("Unsqueeze", [width, c["axis0"]], [p + "width"]),
        node("Slice", [p + "rows", c["zero_1d"], p + "width", c["axis1"]], [gather.output[0]]),
    ]


def graphs(path: Path) -> tuple[bytes, bytes, int]:
    import onnx

    model = onnx.load(str(path))
    rewrite_guards(model.graph)
    engine_graph = model.SerializeToString()
    count = rewrite_relative_shift(model.graph)
    return engine_graph, model.SerializeToString(), count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--frames", type=int, nargs="+", default=[199, 501, 891])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    engine_graph, sliced_graph, count = graphs(
        model_files.locate(args.model_dir, args.precision, None).decoder
    )
    options = session_options(RuntimeConfig(threads=args.threads))
    sessions = {name: ort.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])
                for name, graph in (("engine", engine_graph), ("sliced", sliced_graph))}  # fmt: skip
    load_before = os.getloadavg()
    results = measure(sessions, args.frames, args.repeats, reference="engine")
    print_table(results, reference="engine")
    for frames, rows in results.items():
        rows["ratio"] = round(rows["sliced"]["wall_median_s"] / rows["engine"]["wall_median_s"], 3)
        print(f"{frames} frames: sliced / engine {rows['ratio']}")
    report = timing_report(results, load_before, gathers_rewritten=count)
    print(
        f"{count} GatherElements rewritten; load average before {load_before}, after {report['load_average_after']}"
    )
    save_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
