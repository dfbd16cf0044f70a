"""Decoder cost of the generated test model next to a reference export of the real architecture.

Both directories must have the same configuration (by default: the generator's `tiny` model, built into
a temporary directory, and `REFERENCE`, a small random-weight export of ZipVoice-Distill with the same
widths, beside the checkout). Calls are interleaved (generated, reference, per frame count and repeat)
and the best of N is printed, so a busy machine slows both alike: equal figures mean equal per-frame work.

    python benchmarks/model_structure_cost.py [--model-dir DIR] [--reference DIR] [--frames 470 1220]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from npu_worker.testing.zipvoice_model import build_model_dir

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "data" / "zipvoice_tiny_structure"


def session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def feeds(frames: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(0).standard_normal((1, frames, 100)).astype(np.float32)
    return {
        "t": np.array(0.3, np.float32),
        "x": x,
        "text_condition": 0.3 * x,
        "speech_condition": np.zeros_like(x),
        "guidance_scale": np.array(3.0, np.float32),
    }


def best_times(dirs: dict[str, Path], file: str, frames: list[int], repeats: int, threads: int) -> dict:
    sessions = {name: session(d / file, threads) for name, d in dirs.items()}
    best: dict[tuple[str, int], float] = {}
    for _ in range(repeats):
        for count in frames:
            inputs = feeds(count)
            for name, s in sessions.items():
                started = time.perf_counter()
                s.run(None, inputs)
                key = (name, count)
                best[key] = min(best.get(key, float("inf")), time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", help="generated model (default: build `tiny` into a temp dir)")
    parser.add_argument("--reference", default=str(REFERENCE), help="reference export directory")
    parser.add_argument("--frames", nargs="+", type=int, default=[470, 1220])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        generated = Path(args.model_dir) if args.model_dir else build_model_dir(Path(tmp) / "tiny", "tiny")
        dirs = {"generated": generated, "reference": Path(args.reference)}
        print(f"load average {os.getloadavg()[0]:.2f}, {args.threads} threads, best of {args.repeats}")
        for file in ("fm_decoder_int8.onnx", "fm_decoder.onnx"):
            best = best_times(dirs, file, args.frames, args.repeats, args.threads)
            for count in args.frames:
                cells = "  ".join(f"{name} {best[(name, count)] * 1000:7.1f} ms" for name in dirs)
                print(f"{file:22s} {count:5d} frames  {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
