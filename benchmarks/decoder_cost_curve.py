"""Decoder cost per step against frame count, on the real ZipVoice-Distill structure (full size).

One decoder call is one sampling step. Its cost grows faster than linearly with the frame count (attention
over all frames), so cost per frame has a minimum; and every call also carries the prompt's frames, so the
cost per *generated* frame, `t(P + n) / n`, is what segment lengths and prompt bounds should minimise.
This script times one call at each frame count (interleaved over repeats, best of N, so other load on a
shared machine hurts all counts alike), fits `t(N) = a + b·N + c·N²`, and prints:

- seconds per call and per frame at each count, per precision;
- for a few prompt lengths P, the segment length n that minimises seconds per generated frame and how
  flat the curve is around it (the length range within 5 % of the best).

    python benchmarks/decoder_cost_curve.py --model-dir DIR --precisions int8 fp32 --threads 2 \\
        --json benchmarks/decoder_cost_curve.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from npu_worker.engine.providers import RuntimeConfig, open_session
from npu_worker.engine.zipvoice import model_files

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


def time_calls(model_dir: Path, precision: str, frames: list[int], repeats: int, threads: int) -> dict:
    files = model_files.locate(str(model_dir), precision, None)
    session = open_session(files.decoder, "cpu", RuntimeConfig(threads=threads))
    session.run(None, feeds(frames[0]))  # warm-up
    best: dict[int, float] = {}
    for repeat in range(repeats):
        for count in frames if repeat % 2 == 0 else reversed(frames):
            started = time.perf_counter()
            session.run(None, feeds(count))
            best[count] = min(best.get(count, float("inf")), time.perf_counter() - started)
        print(f"  {precision} repeat {repeat + 1}/{repeats}", file=sys.stderr, flush=True)
    return best


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
        "best_seconds_audio": round(n[index] / FRAMES_PER_SECOND, 1),
        "ms_per_generated_frame": round(1000 * per_frame[index], 3),
        "within_5pct_frames": [int(near.min()), int(near.max())],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True, help="make-test-model DIR --size full")
    parser.add_argument("--precisions", nargs="+", default=["int8", "fp32"])
    parser.add_argument("--frames", nargs="+", type=int, default=list(FRAMES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    report: dict = {
        "command": " ".join(["python", *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_start": os.getloadavg(),
        "threads": args.threads,
        "precisions": {},
    }
    for precision in args.precisions:
        best = time_calls(Path(args.model_dir), precision, args.frames, args.repeats, args.threads)
        coeffs = fit(best)
        rows = {
            n: {"call_s": round(s, 4), "ms_per_frame": round(1000 * s / n, 3)}
            for n, s in sorted(best.items())
        }
        report["precisions"][precision] = {
            "calls": rows,
            "fit_a_b_c": coeffs,
            "segments": [best_segment(coeffs, p) for p in PROMPTS],
        }
        print(f"\n{precision}: frames  call s  ms/frame", file=sys.stderr)
        for n, row in rows.items():
            print(f"  {n:6d}  {row['call_s']:.4f}  {row['ms_per_frame']:.3f}", file=sys.stderr)
        for seg in report["precisions"][precision]["segments"]:
            print(f"  prompt {seg['prompt_frames']:4d}: best {seg}", file=sys.stderr)
    report["load_average_end"] = os.getloadavg()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
