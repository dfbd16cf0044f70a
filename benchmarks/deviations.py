"""What each speed-motivated deviation from the official ZipVoice pipeline does to the output.

Each deviation is a `serve` flag; this script runs the engine with the defaults and with each flag set back
to the official behaviour (or further), on the same slides, seeds and model, and prints per variant: the
prompt's frames (first segment / others), the decoder work (Σ frames × steps over all calls), the audio
length, the leading/trailing silence of the output, the engine's first audio on slide 0, process CPU
seconds, and for variants that keep the frame count of the first segment, the relative log-mel distance
of that segment's audio to the default's (how much the audio itself changes). Each variant's first
segment is also compared with the same segment sampled with 16 steps (same noise, text and prompt): the
distance says how far that step count stops from where the sampler converges, so the cost of
`--first-segment-steps` is a number, not a guess.

With random-weight models (the generated test models) the distances say how far the output moves, not
whether it sounds better or worse; frames, lengths and silences are the same as with real weights.

    python benchmarks/deviations.py --model-dir DIR [--ref-wav WAV] --slides 0-4 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import report_header, write_report

from npu_worker.config import Settings
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.features import SpectrumConfig, chunk_levels_db, log_mel
from npu_worker.engine_options import zipvoice_config

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"
VARIANTS = {
    "default": {},
    "official pauses (--prompt-max-pause-seconds 1)": {"prompt_max_pause_seconds": 1.0},
    "no prompt bound (--prompt-max-seconds 30)": {
        "prompt_max_seconds": 30.0,
        "first_prompt_max_seconds": 30.0,
    },
    "prompt bound 4 s (--prompt-max-seconds 4, the former default)": {"prompt_max_seconds": 4.0},
    "prompt bound 2 s (--prompt-max-seconds 2)": {"prompt_max_seconds": 2.0, "first_prompt_max_seconds": 2.0},
    "no short first prompt (--first-prompt-max-seconds 3)": {"first_prompt_max_seconds": 3.0},
    "no edge trim (--no-trim-edge-silence)": {"trim_edge_silence": False},
    "first segment 3 steps (--first-segment-steps 3)": {"first_segment_steps": 3},
    "first segment 2 steps (--first-segment-steps 2)": {"first_segment_steps": 2},
    "18 s segments (--segment-seconds 18)": {"segment_seconds": 18.0},
}


CONVERGED_STEPS = 16  # the sampler's result with many steps: the yardstick for fewer steps


def silence_ms(audio: np.ndarray, rate: int, threshold_db: float = -50.0) -> tuple[float, float]:
    loud = np.flatnonzero(chunk_levels_db(audio, rate) > threshold_db)
    if loud.size == 0:
        return float(audio.size / rate * 1000), 0.0
    chunks = chunk_levels_db(audio, rate).size
    return float(loud[0] * 10), float((chunks - 1 - loud[-1]) * 10)


def run_variant(base: Settings, changes: dict, slides: list[str], steps: int) -> dict:
    engine: ZipVoiceEngine = create(zipvoice_config(base.replace(**changes)))
    engine.load()
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    engine.segment_audio("안녕하세요.")  # warm-up
    out: dict = {"prompt_frames_first": prompts.first.frames, "prompt_frames_rest": prompts.rest.frames,
                 "frame_steps": 0, "audio_s": 0.0, "lead_ms": [], "trail_ms": []}  # fmt: skip
    cpu = time.process_time()
    first_segment = None
    for index, text in enumerate(slides):
        started = time.perf_counter()
        chunks, first = [], None
        for chunk in engine.stream(SynthesisRequest(text, lang="ko", seed=index, early_audio=index == 0)):
            if chunk.size:  # (empty: a step boundary)
                first = first if first is not None else time.perf_counter() - started
            chunks.append(chunk)
        audio = np.concatenate(chunks)
        if index == 0:
            out["first_audio_s"] = round(first or 0.0, 3)
            trace = engine.traces[0]
            steps_used = len(trace.step_seconds)
            first_segment = (
                trace.frames,
                engine.segment_audio(trace.text, seed=0, first=True, steps=steps_used),
                engine.segment_audio(trace.text, seed=0, first=True, steps=CONVERGED_STEPS),
            )
            out["first_segment_steps"] = steps_used
        out["frame_steps"] += sum(t.frames * len(t.step_seconds) for t in engine.traces)
        out["audio_s"] += audio.size / engine.info.sample_rate
        lead, trail = silence_ms(audio, engine.info.sample_rate)
        out["lead_ms"].append(lead)
        out["trail_ms"].append(trail)
    out["cpu_s"] = round(time.process_time() - cpu, 2)
    out["audio_s"] = round(out["audio_s"], 2)
    out["segments_slide_0"] = len(engine.traces) if len(slides) == 1 else None
    out["_first_segment"] = first_segment
    out["_num_steps"] = steps
    return out


def mel_distance(reference: np.ndarray, other: np.ndarray) -> float:
    spectrum = SpectrumConfig()
    a, b = log_mel(reference, spectrum), log_mel(other, spectrum)
    n = min(len(a), len(b))
    return float(np.linalg.norm(a[:n] - b[:n]) / np.linalg.norm(a[:n]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--ref-wav", help="default: reference_ko.wav in the model dir")
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--slides", default="0-4")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    low, _, high = args.slides.partition("-")
    sections = json.loads(LECTURE.read_text(encoding="utf-8"))["sections"]
    slides = [s["text"] for s in sections[int(low) : int(high or low) + 1]]
    base = Settings(
        backend="zipvoice-onnx", model_dir=args.model_dir, precision=args.precision, device="cpu",
        ref_wav=args.ref_wav or str(Path(args.model_dir) / "reference_ko.wav"), num_steps=args.steps,
        threads=args.threads, state_dir=tempfile.mkdtemp(prefix="deviations-"),
    )  # fmt: skip
    results = {}
    for name, changes in VARIANTS.items():
        results[name] = run_variant(base, changes, slides, args.steps)
        print(
            f"{name}: { ({k: v for k, v in results[name].items() if not k.startswith('_')}) }",
            file=sys.stderr,
        )
    reference = results["default"]["_first_segment"]
    for row in results.values():
        frames, audio, converged = row.pop("_first_segment")
        row.pop("_num_steps")
        row["first_segment_mel_distance"] = (
            round(mel_distance(reference[1], audio), 4) if frames == reference[0] else None
        )
        # How far the sampler stops from where many steps lead (same noise, text and prompt): what
        # fewer steps cost, measured, for every variant on its own first segment.
        row[f"first_segment_distance_to_{CONVERGED_STEPS}_steps"] = round(mel_distance(converged, audio), 4)
    report = {**report_header(), "load_average": os.getloadavg(), "variants": results}  # fmt: skip
    write_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
