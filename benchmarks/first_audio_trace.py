"""Where the first audio of lecture slide 0 goes, in-process: encoder, each decoder step, vocoder.

Loads the ZipVoice engine once per round (CPU, `--threads`, the shipped defaults otherwise), then
synthesises slide 0 `--runs` times; run 0 is the cold request right after the load. Prints per run the
time to the first yielded piece and the first segment's trace (`ZipVoiceEngine.traces`).

    python benchmarks/first_audio_trace.py --model-dir DIR --rounds 3 --runs 3 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from npu_worker.bench.cli import DEFAULT_TEXTS
from npu_worker.config import Settings
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine_options import build_engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    text = json.loads(DEFAULT_TEXTS.read_text(encoding="utf-8"))["sections"][0]["text"]
    settings = Settings(
        backend="zipvoice-onnx",
        model_dir=str(args.model_dir),
        ref_wav=str(args.model_dir / "reference_ko.wav"),
        num_steps=args.steps,
        threads=args.threads,
    )
    rounds = []
    for round_index in range(args.rounds):
        engine = build_engine(settings)
        started = time.perf_counter()
        engine.load()
        runs = {"load_s": round(time.perf_counter() - started, 3), "runs": []}
        for run in range(args.runs):
            started, first = time.perf_counter(), None
            for chunk in engine.stream(SynthesisRequest(text=text, lang="ko")):
                if chunk.size:  # (empty: a step boundary)
                    first = first if first is not None else time.perf_counter() - started
            trace = engine.traces[0]
            row = {
                "run": run,
                "first_audio_s": round(first or 0.0, 3),
                "encoder_s": round(trace.encoder_seconds, 3),
                "steps_s": [round(s, 3) for s in trace.step_seconds],
                "vocoder_s": round(trace.vocoder_seconds, 3),
                "frames": trace.frames,
                "load_average_1m": round(os.getloadavg()[0], 2),
            }
            runs["runs"].append(row)
            print(round_index, json.dumps(row), flush=True)
        rounds.append(runs)
        engine.close()
    report = {
        "command": "python " + " ".join(sys.argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "rounds": rounds,
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
