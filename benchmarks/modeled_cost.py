"""Decoder work of the whole lecture, engine configs vs sherpa-onnx, from frame counts and the cost curve.

A shared machine makes wall-time ratios noisy; the decoder's work is not. This script plans every slide
as the engine would (segments, prompts, frame counts from the speed fix, steps per segment) and as the
sherpa-onnx comparison in engine_rtf.py runs it (one call per sentence, its prompt of 1 + n/256 frames),
and sums `steps × t(frames)` with the measured CPU cost curve (npu_worker/engine/zipvoice/cost.py,
benchmarks/DECODER_COST.md). No decoder runs: it takes seconds for all 39 slides. The decoder is ≈ 95 %
of the engine's time, so the ratio of these sums is the ratio the wall clock approaches on a quiet machine.

    python benchmarks/modeled_cost.py --model-dir DIR --configs old:segment_seconds=18 default
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

from benchmarks.engine_rtf import LECTURE, UTTERANCE, load_reference, parse_configs
from npu_worker.config import Settings
from npu_worker.engine.zipvoice import cost
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.segmenter import split_sentences
from npu_worker.engine.zipvoice.tokenizer import add_punctuation
from npu_worker.engine_options import zipvoice_config


def engine_calls(engine: ZipVoiceEngine, text: str, early: bool, steps: int) -> list[tuple[int, int, int]]:
    """(frames, prompt frames, steps) of each decoder segment the engine would run for `text`."""
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    calls = []
    rate = prompts.frames_per_token
    for index, segment in enumerate(engine.plan(text, "ko", prompts.rest, 1.0, early, rate)):
        first = index == 0 and early
        prompt = prompts.first if first else prompts.rest
        tokens = len(engine._token_ids(add_punctuation(segment), "ko"))
        frames = prompt.frames + math.ceil(rate * tokens - 1e-9)  # as ZipVoiceEngine.segment_pieces
        calls.append(
            (frames, prompt.frames, (engine.options.first_segment_steps or steps) if first else steps)
        )
    return calls


def sherpa_calls(
    engine: ZipVoiceEngine, text: str, prompt_frames: int, prompt_tokens: int, steps: int
) -> list:
    calls = []
    for sentence in split_sentences(text):
        tokens = len(engine._token_ids(add_punctuation(sentence), "ko"))
        calls.append(
            (int(-(-prompt_frames * (prompt_tokens + tokens) // prompt_tokens)), prompt_frames, steps)
        )
    return calls


def summary(calls: list[tuple[int, int, int]], model: cost.DecoderCost) -> dict:
    return {
        "decoder_cpu_s": round(sum(s * model.call_seconds(f) for f, _, s in calls), 2),
        "calls": len(calls),
        "frames": sum(f for f, _, _ in calls),
        "generated_frames": sum(f - p for f, p, _ in calls),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--cost-curve", choices=sorted(cost.MEASURED), help="default: --precision's")
    parser.add_argument("--configs", nargs="+", default=["default"])
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    ref_wav = Path(args.model_dir) / "reference_ko.wav"
    slides = [s["text"] for s in json.loads(LECTURE.read_text(encoding="utf-8"))["sections"]]
    model = cost.MEASURED[args.cost_curve or args.precision]
    report: dict = {"command": " ".join(["python", *sys.argv]), "cost_curve": vars(model), "configs": {}}
    # Frame counts depend on the tokenizer and the prompt only, so a tiny model plans like the full one.
    sherpa: dict = {}
    for name, overrides in parse_configs(args.configs).items():
        base = Settings(
            backend="zipvoice-onnx", model_dir=args.model_dir, ref_wav=str(ref_wav), precision=args.precision,
            num_steps=args.steps, device="cpu", threads=1, state_dir=tempfile.mkdtemp(prefix="modeled-"),
        )  # fmt: skip
        engine = create(zipvoice_config(base.replace(**overrides)))
        engine.load()
        lecture = [c for i, text in enumerate(slides) for c in engine_calls(engine, text, i == 0, args.steps)]
        report["configs"][name] = {
            "lecture": summary(lecture, model),
            "utterance": summary(engine_calls(engine, UTTERANCE, True, args.steps), model),
            "utterance_packed": summary(engine_calls(engine, UTTERANCE, False, args.steps), model),
            "first_segment": summary(engine_calls(engine, slides[0], True, args.steps)[:1], model),
        }
        if not sherpa:
            prompt_frames = 1 + load_reference(ref_wav).size // 256
            text = ref_wav.with_suffix(".txt").read_text(encoding="utf-8").strip()
            prompt_tokens = len(engine._token_ids(add_punctuation(text), "ko"))
            lecture = [
                c for t in slides for c in sherpa_calls(engine, t, prompt_frames, prompt_tokens, args.steps)
            ]
            sherpa = {
                "lecture": summary(lecture, model),
                "utterance": summary(sherpa_calls(engine, UTTERANCE, prompt_frames, prompt_tokens, args.steps), model),
                "first_sentence": summary(
                    sherpa_calls(engine, slides[0], prompt_frames, prompt_tokens, args.steps)[:1], model
                ),
            }  # fmt: skip
    report["sherpa"] = sherpa
    for name, row in report["configs"].items():
        for mode in ("lecture", "utterance", "utterance_packed"):
            theirs = sherpa["lecture" if mode == "lecture" else "utterance"]["decoder_cpu_s"]
            row[mode]["ratio"] = round(row[mode]["decoder_cpu_s"] / theirs, 3)
        print(f"{name}: " + json.dumps(row), file=sys.stderr)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
