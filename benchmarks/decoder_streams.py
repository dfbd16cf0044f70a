"""Throughput of the decoder on 2 cores: one session with 2 intra-op threads, or two 1-thread sessions side by side.

The engine runs one section at a time with every core on its decoder calls (best for one request's
latency). For a batch, two sections could run at once, each with one thread: this measures whether that
would give more decoder calls per second. Per frame count: `--calls` calls on the 2-thread session one
after the other, then the same number split over two 1-thread sessions in two Python threads
(onnxruntime releases the GIL while it runs); both on the engine's graph (Swoosh guards rewritten),
interleaved over `--rounds`, best round kept.

    python benchmarks/decoder_streams.py --model-dir DIR --frames 199 501 763 901 --calls 8 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import onnxruntime as ort
from decoder_cost_curve import feeds  # the same inputs as the cost curve (run from benchmarks/)

from npu_worker.engine.providers import RuntimeConfig, session_options
from npu_worker.engine.zipvoice import model_files
from npu_worker.engine.zipvoice.swoosh import rewritten_model


def one_stream(session: ort.InferenceSession, inputs: dict, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        session.run(None, inputs)
    return time.perf_counter() - started


def two_streams(sessions: list[ort.InferenceSession], inputs: dict, calls: int) -> float:
    workers = [
        threading.Thread(target=one_stream, args=(s, inputs, n))
        for s, n in zip(sessions, (calls - calls // 2, calls // 2), strict=True)
    ]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--frames", nargs="+", type=int, default=[199, 501, 763, 901])
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    path = model_files.locate(args.model_dir, args.precision, None).decoder
    graph = rewritten_model(path) or str(path)

    def session(threads: int) -> ort.InferenceSession:
        options = session_options(RuntimeConfig(threads=threads))
        return ort.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])

    wide, narrow = session(2), [session(1), session(1)]
    load_before = os.getloadavg()
    rows = []
    for frames in args.frames:
        inputs = feeds(frames)
        for s in (wide, *narrow):
            s.run(None, inputs)  # warm-up at this shape
        one, two = [], []
        for _ in range(args.rounds):
            one.append(one_stream(wide, inputs, args.calls))
            two.append(two_streams(narrow, inputs, args.calls))
        row = {
            "frames": frames,
            "one_2_thread_session_s_per_call": round(min(one) / args.calls, 4),
            "two_1_thread_sessions_s_per_call": round(min(two) / args.calls, 4),
            "throughput_gain": round(min(one) / min(two), 2),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    report = {
        "command": " ".join(["python", *sys.argv]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "onnxruntime": ort.__version__,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "rows": rows,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
