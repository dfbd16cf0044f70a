"""The a16w8 prepare's quantise step alone: `quantize_static` with onnxruntime's own graph scans against the
same call with `quantiser_index`'s indexes, in fresh processes, interleaved.

Builds the graph `qdq.qdq_graph` hands the quantiser (Swoosh rewrite, specialised to --frames, QNN
pre-processing, MinMax ranges over two random feeds: `activation_ranges.write_ranges`) once, then runs
`quantize_static` on it --rounds times each way, CPU seconds of that call alone per run, and says whether
the quantised files are byte for byte the same. Results: benchmarks/QNN_PREPARE.md.

    python benchmarks/qdq_quantise.py --decoder DIR/fm_decoder.onnx [--frames 383] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _config(graph: Path):  # noqa: ANN202 - onnxruntime's StaticQuantConfig, as qdq.qdq_graph makes it
    import onnx
    from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config

    from npu_worker.engine.zipvoice import activation_ranges, qdq

    proto = onnx.load(str(graph), load_external_data=False)
    in_float = qdq.scalar_branch(proto) + [n.name for n in proto.graph.node if n.op_type in qdq.FLOAT_OPS]
    return get_qnn_qdq_config(
        str(graph),
        activation_ranges.FeedReader([]),
        activation_type=qdq._quant_type(16),
        weight_type=qdq._quant_type(8),
        stride=1,
        nodes_to_exclude=in_float,
    )


def build(decoder: Path, frames: int, work: Path) -> None:
    """work/preprocessed.onnx and work/ranges.json, as qdq.qdq_graph makes them before quantize_static."""
    import onnx
    from onnxruntime.quantization.execution_providers.qnn import qnn_preprocess_model

    from npu_worker.engine import specialize
    from npu_worker.engine.zipvoice import activation_ranges, swoosh
    from npu_worker.engine.zipvoice.runtime import bucket_dims

    rewritten = work / "rewritten.onnx"
    rewritten.write_bytes(swoosh.rewritten_model(decoder) or b"")
    with specialize.static_graph(rewritten, bucket_dims(decoder, (frames,))[frames], work) as static:
        model = onnx.load(str(static))
    del model.metadata_props[:]
    onnx.save(model, str(work / "static.onnx"))
    if not qnn_preprocess_model(str(work / "static.onnx"), str(work / "preprocessed.onnx")):
        os.replace(work / "static.onnx", work / "preprocessed.onnx")
    rng = np.random.default_rng(0)
    feeds = [
        {"t": np.array(0.3, np.float32), "guidance_scale": np.array(1.0, np.float32)}
        | {
            name: rng.standard_normal((1, frames, 100), np.float32)
            for name in ("x", "text_condition", "speech_condition")
        }
        for _ in range(2)
    ]
    graph = work / "preprocessed.onnx"
    activation_ranges.write_ranges(graph, _config(graph), feeds, work / "ranges.json", work)


def quantise(work: Path, output: Path, indexed: bool) -> float:
    """CPU seconds of quantize_static on work's graph and ranges, into `output`."""
    from onnxruntime.quantization import quantize_static

    from npu_worker.engine.zipvoice import quantiser_index

    graph = work / "preprocessed.onnx"
    config = _config(graph)
    settings = {
        name: getattr(config, name)
        for name in inspect.signature(quantize_static).parameters
        if hasattr(config, name) and name != "calibration_data_reader"
    }
    block = (
        quantiser_index.indexed_renames(config.extra_options) if indexed else contextlib.nullcontext(False)
    )
    started = time.process_time()
    with block as used:
        quantize_static(
            str(graph), str(output), None, calibration_cache_path=work / "ranges.json", **settings
        )
    if used != indexed:
        raise SystemExit("the index does not apply to this onnxruntime")
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decoder", type=Path, required=True)
    parser.add_argument("--frames", type=int, default=383)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", nargs=3, metavar=("WORK", "OUTPUT", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        work, output, mode = args.child
        print(f"{quantise(Path(work), Path(output), mode == 'indexed'):.1f}")
        return
    with tempfile.TemporaryDirectory(prefix="qdq-bench-") as scratch:
        work = Path(scratch)
        build(args.decoder, args.frames, work)
        seconds: dict[str, list[float]] = {"scans": [], "indexed": []}
        for round_ in range(args.rounds):
            for mode in seconds:
                load = os.getloadavg()[0]
                child = [sys.executable, __file__, "--decoder", str(args.decoder), "--child"]
                run = subprocess.run(  # noqa: S603 - this interpreter, this script
                    [*child, str(work), str(work / f"{mode}-{round_}.onnx"), mode],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                seconds[mode].append(float(run.stdout.split()[-1]))
                print(f"round {round_ + 1} {mode}: {seconds[mode][-1]} CPU s (load {load:.1f})", flush=True)
        same = all(
            (work / f"scans-{r}.onnx").read_bytes() == (work / f"indexed-{r}.onnx").read_bytes()
            for r in range(args.rounds)
        )
        for mode, values in seconds.items():
            print(f"{mode}: median {sorted(values)[len(values) // 2]:.1f} CPU s, runs {values}")
        print("quantised files byte for byte the same:", same)


if __name__ == "__main__":
    main()
