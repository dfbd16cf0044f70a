"""One decoder call under session variants: the graph as exported, the Swoosh guards rewritten, session options.

Opens the decoder of a model directory once per variant (CPU, `--threads`), runs each on the same random
inputs at each frame count, interleaved over `--repeats`, and prints per variant the median and best wall
and process-CPU seconds of one call and the relative L2 distance of its output to the exported graph's
(0 = bit-identical). `--profile` adds onnxruntime's per-op-type kernel time of the exported graph, the
rewritten one and the rewrite with its former `Min` bound, at the largest frame count (where a call's
time goes).

Variants: `exported` (the file as the engine opened it before), `rewritten` (npu_worker/engine/zipvoice/
swoosh.py: what the engine opens now), and the rewritten graph with `session.intra_op.allow_spinning=0`,
with `session.set_denormal_as_zero=1`, without the memory arena and pattern, and the rewrite with the
exp's input bounded by `Min` (as it was before `Clip`).

    python benchmarks/decoder_session.py --model-dir DIR --frames 400 700 1000 --repeats 5 --profile \\
        --json benchmarks/results/decoder_session_NAME_DATE.json
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from common import clocked, report_header, write_report

from npu_worker.engine.providers import RuntimeConfig, session_options
from npu_worker.engine.zipvoice import model_files
from npu_worker.engine.zipvoice.swoosh import rewritten_model

ENTRIES = {
    "rewritten, no spinning": {"session.intra_op.allow_spinning": "0"},
    "rewritten, denormals as zero": {"session.set_denormal_as_zero": "1"},
}


def open_variants(path: Path, threads: int, only: list[str] | None) -> dict[str, Any]:
    def session(model: str | bytes, entries: dict | None = None, arena: bool = True) -> Any:
        options = session_options(RuntimeConfig(threads=threads))
        for key, value in (entries or {}).items():
            options.add_session_config_entry(key, value)
        options.enable_cpu_mem_arena = options.enable_mem_pattern = arena
        return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])

    rewritten = rewritten_model(path) or str(path)
    variants = {"exported": lambda: session(str(path)), "rewritten": lambda: session(rewritten)}
    variants |= {name: (lambda e=entries: session(rewritten, e)) for name, entries in ENTRIES.items()}
    variants["rewritten, no memory arena/pattern"] = lambda: session(rewritten, arena=False)
    variants["rewritten, Min bound (before Clip)"] = lambda: session(min_bound(path))
    return {name: make() for name, make in variants.items() if not only or name in only}


@functools.cache
def min_bound(path: Path) -> bytes | str:
    """The rewrite as it was before `Clip`: the exp's input bounded with a broadcasting `Min` (once per
    file: the variants and the profile share it)."""
    return rewritten_model(path, clip=False) or str(path)


def feeds(frames: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(frames).standard_normal((1, frames, 100)).astype(np.float32)
    return {"t": np.array(0.3, np.float32), "x": x, "text_condition": 0.3 * x,
            "speech_condition": np.zeros_like(x), "guidance_scale": np.array(3.0, np.float32)}  # fmt: skip


def measure(sessions: dict[str, Any], frames: list[int], repeats: int, reference: str = "exported") -> dict:
    """Per frame count and session: wall/CPU summary and the relative L2 distance of its output to the
    `reference` session's (when that session is among them)."""
    out: dict = {}
    for count in frames:
        inputs = feeds(count)
        results = {name: session.run(None, inputs)[0] for name, session in sessions.items()}  # + warm-up
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in sessions}
        for _ in range(repeats):
            for name, session in sessions.items():
                times[name].append(clocked(lambda run=session.run, feed=inputs: run(None, feed)))
        base = results.get(reference)
        out[str(count)] = {
            name: summary(values, reference, None if base is None else relative_l2(results[name], base))
            for name, values in times.items()
        }
    return out


def relative_l2(result: np.ndarray, base: np.ndarray) -> float:
    return float(np.linalg.norm(result - base) / np.linalg.norm(base))


def summary(values: list[tuple[float, float]], reference: str, distance: float | None) -> dict:
    walls, cpus = [w for w, _ in values], [c for _, c in values]
    return {"wall_median_s": round(statistics.median(walls), 4), "wall_best_s": round(min(walls), 4),
            "cpu_median_s": round(statistics.median(cpus), 4), "cpu_best_s": round(min(cpus), 4),
            f"relative_l2_to_{reference}": distance}  # fmt: skip


def op_profile(model: str | bytes, threads: int, frames: int, runs: int = 3) -> dict[str, float]:
    """Kernel milliseconds per op type and call (onnxruntime's profiler), largest first."""
    options = session_options(RuntimeConfig(threads=threads))
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(tempfile.mkdtemp(prefix="decoder-profile-")) / "run")
    session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    inputs = feeds(frames)
    for _ in range(runs + 1):
        session.run(None, inputs)
    events = json.loads(Path(session.end_profiling()).read_text(encoding="utf-8"))
    per_op: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            per_op[event["args"]["op_name"]] += event["dur"]
    return {op: round(us / 1000 / (runs + 1), 1) for op, us in per_op.most_common(14)}


def print_table(results: dict, reference: str = "exported") -> None:
    for frames, rows in results.items():
        print(
            f"\n{frames} frames | wall median s | wall best s | CPU median s | CPU best s | rel. L2 to {reference}"
        )
        for name, row in rows.items():
            distance = row[f"relative_l2_to_{reference}"]
            print(f"  {name:36s} | {row['wall_median_s']:.3f} | {row['wall_best_s']:.3f} | "
                  f"{row['cpu_median_s']:.3f} | {row['cpu_best_s']:.3f} | "
                  f"{'-' if distance is None else f'{distance:.2e}'}")  # fmt: skip


def timing_report(results: dict, load_before: tuple[float, float, float], **extra: Any) -> dict:
    """The JSON report around `measure`'s results: how it was run, and the load before and after."""
    return {**report_header(), "onnxruntime": ort.__version__, **extra, "load_average_before": load_before,
            "load_average_after": os.getloadavg(), "calls": results}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--frames", type=int, nargs="+", default=[400, 700, 1000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--variants", nargs="*", help="only these variants (names as printed)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    path = model_files.locate(args.model_dir, args.precision, None).decoder
    load_before = os.getloadavg()
    sessions = open_variants(path, args.threads, args.variants)
    results = measure(sessions, args.frames, args.repeats)
    print_table(results)
    report = timing_report(results, load_before)
    if args.profile:
        largest = max(args.frames)
        report["op_ms_per_call"] = {
            "exported": op_profile(str(path), args.threads, largest),
            "rewritten": op_profile(rewritten_model(path) or str(path), args.threads, largest),
            "rewritten, Min bound (before Clip)": op_profile(min_bound(path), args.threads, largest),
            "frames": largest,
        }
        print(json.dumps(report["op_ms_per_call"], indent=1))
    print(f"load average before {load_before}, after {report['load_average_after']}")
    write_report(report, args.json, echo=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
