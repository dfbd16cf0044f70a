"""Decoder cost per step against frame count, on the real ZipVoice-Distill structure (full size).

One decoder call is one sampling step. Its cost grows faster than linearly with the frame count (attention
over all frames), so cost per frame has a minimum; and every call also carries the prompt's frames, so the
cost per *generated* frame, `t(P + n) / n`, is what segment lengths and prompt bounds should minimise.
This script times one call at each frame count (interleaved over repeats, best of N, so other load on a
shared machine hurts all counts alike), both as wall time and as the process's CPU time with the
intra-op threads' spin-waiting turned off (CPU seconds are the work itself: a busy machine makes a
call wait longer but not use more CPU), fits `t(N) = a + b·N + c·N²` to each, and prints:

- seconds per call and per frame at each count, per precision;
- for a few prompt lengths P, the segment length n that minimises seconds per generated frame and how
  flat the curve is around it (the length range within 5 % of the best).

    python benchmarks/decoder_cost_curve.py --model-dir DIR --precisions int8 fp32 --threads 2 \\
        --json benchmarks/results/decoder_cost_curve_NAME_DATE.json

The decoder is timed as the engine opens it (its Swoosh guards rewritten: swoosh.py); `--as-exported`
times the file as it is.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from common import clocked, report_header, write_report

from npu_worker.engine.zipvoice import model_files
from npu_worker.engine.zipvoice.swoosh import rewritten_model

FRAMES = (100, 200, 300, 400, 500, 650, 800, 1000, 1200, 1500, 1800)
PROMPTS = (0, 117, 200, 323)  # prompt frames: none, the engine's short first prompt, 2 s, the 4 s bound
FRAMES_PER_SECOND = 24000 / 256


def feeds(frames: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(frames).standard_normal((1, frames, 100)).astype(np.float32)
    return {
        "t": np.array(0.3, np.float32),
        "x": x,
        "text_condition": 0.3 * x,
        "speech_condition": 0.1 * x,
        "guidance_scale": np.array(3.0, np.float32),
    }


def session(path: Path, threads: int, exported: bool = False) -> ort.InferenceSession:
    """The decoder as the engine opens it (Swoosh guards rewritten), or as exported."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # CPU time = work
    graph = None if exported else rewritten_model(path)
    return ort.InferenceSession(graph or str(path), options, providers=["CPUExecutionProvider"])


def time_calls(
    model_dir: Path, precision: str, frames: list[int], repeats: int, threads: int, exported: bool = False
) -> tuple[dict[int, float], dict[int, float]]:
    """Best wall seconds and best CPU seconds per call, per frame count."""
    files = model_files.locate(str(model_dir), precision, None)
    decoder = session(files.decoder, threads, exported)
    decoder.run(None, feeds(frames[0]))  # warm-up
    wall: dict[int, float] = {}
    cpu: dict[int, float] = {}
    for repeat in range(repeats):
        for count in frames if repeat % 2 == 0 else reversed(frames):
            inputs = feeds(count)
            wall_s, cpu_s = clocked(lambda inputs=inputs: decoder.run(None, inputs))
            wall[count] = min(wall.get(count, float("inf")), wall_s)
            cpu[count] = min(cpu.get(count, float("inf")), cpu_s)
        print(f"  {precision} repeat {repeat + 1}/{repeats}", file=sys.stderr, flush=True)
    return wall, cpu


def fit(best: dict[int, float]) -> tuple[float, float, float]:
    """Least squares `t = a + b·N + c·N²` (seconds per call)."""
    counts = np.array(sorted(best), dtype=np.float64)
    seconds = np.array([best[int(n)] for n in counts])
    c, b, a = np.polyfit(counts, seconds, 2)
    return float(a), float(b), float(c)


def best_segment(coeffs: tuple[float, float, float], prompt: int, longest: int = 2400) -> dict:
    """Generated frames n minimising t(P + n) / n, and the range of n within 5 % of that minimum."""
    a, b, c = coeffs
    n = np.arange(20, longest, dtype=np.float64)
    total = prompt + n
    per_frame = (a + b * total + c * total**2) / n
    index = int(np.argmin(per_frame))
    near = n[per_frame <= per_frame[index] * 1.05]
    return {
        "prompt_frames": prompt,
        "best_frames": int(n[index]),
        "best_seconds_audio": round(float(n[index]) / FRAMES_PER_SECOND, 1),
        "ms_per_generated_frame": round(1000 * float(per_frame[index]), 3),
        "within_5pct_frames": [int(near.min()), int(near.max())],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True, help="make-test-model DIR --size full")
    parser.add_argument("--precisions", nargs="+", default=["int8", "fp32"])
    parser.add_argument("--frames", nargs="+", type=int, default=list(FRAMES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--as-exported", action="store_true", help="time the file as exported (no guard rewrite)"
    )
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    report: dict = {
        **report_header(),
        "load_average_start": os.getloadavg(),
        "threads": args.threads,
        "graph": "as exported" if args.as_exported else "Swoosh guards rewritten (as the engine opens it)",
        "precisions": {},
    }
    for precision in args.precisions:
        wall, cpu = time_calls(
            Path(args.model_dir), precision, args.frames, args.repeats, args.threads, args.as_exported
        )
        block: dict = {}
        for clock, best in (("wall", wall), ("cpu", cpu)):
            coeffs = fit(best)
            block[clock] = {
                "calls": {n: {"s": round(t, 4), "ms_per_frame": round(1000 * t / n, 3)} for n, t in sorted(best.items())},
                "fit_a_b_c": coeffs,
                "segments": [best_segment(coeffs, p) for p in PROMPTS],
            }  # fmt: skip
        report["precisions"][precision] = block
        print(f"\n{precision}: frames  wall s  CPU s  wall ms/frame  CPU ms/frame", file=sys.stderr)
        for n in sorted(wall):
            print(
                f"  {n:6d}  {wall[n]:.4f}  {cpu[n]:.4f}  {1000 * wall[n] / n:.3f}  {1000 * cpu[n] / n:.3f}",
                file=sys.stderr,
            )
        for clock in ("wall", "cpu"):
            for seg in block[clock]["segments"]:
                print(f"  {clock} prompt {seg['prompt_frames']:4d}: {seg}", file=sys.stderr)
    report["load_average_end"] = os.getloadavg()
    write_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
