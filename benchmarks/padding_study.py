"""How much padding a segment up to its decoder bucket changes the mel, per bucket set and layout.

The exported ZipVoice decoder has no padding mask, so the frames added to reach a bucket change the
real frames' output. For every segment the engine plans for the lecture (each section as a preview,
with the short first segment, and as a batch section), this samples the segment once with the
dynamic decoder and once per bucket set with the bucketed decoder (same seed), and reports the
relative L2 difference of the final generated mel, the share of segments within the bound, and the
frames the decoder computes relative to the unpadded length.

    python benchmarks/padding_study.py --model-dir DIR --ref-wav WAV [--precision fp32] [--steps 8]

DIR is a ZipVoice ONNX export (decoder, encoder, tokens, vocoder); WAV a reference voice with its
transcript beside it (.txt). Layouts: `front` is the engine's (runtime.BucketedDecoder, with the
segment generated as `aligned_frames` frames, ≤ 3 more, and compared with the dynamic decoder at
that length); `back` puts all padding behind the segment (noise x, repeated text condition, zero
speech condition), the layout the engine used before.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from npu_worker.config import Settings  # noqa: E402
from npu_worker.engine.zipvoice import runtime, sampler  # noqa: E402
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine  # noqa: E402
from npu_worker.engine.zipvoice.tokenizer import add_punctuation  # noqa: E402

LECTURE = ROOT / "npu_worker" / "bench" / "lecture_ko_39.json"
BOUND = 0.005
BUCKET_SETS = {
    "5: 383, 767, 1151, 1535, 2079 (default)": runtime.DEFAULT_BUCKETS,
    "8: 255, 383, 511, 767, 1023, 1535, 2047, 2559": (255, 383, 511, 767, 1023, 1535, 2047, 2559),
    "3: 383, 1023, 2047": (383, 1023, 2047),
    "1: 2079": (2079,),
}
BACK_ALSO = "8: 255, 383, 511, 767, 1023, 1535, 2047, 2559"  # the old layout at the old sizes (±1)


class BackPadded(runtime.BucketedDecoder):
    """The old layout: every pad frame behind the segment (noise x, last text frame, zero speech)."""

    def __call__(self, t: float, x: np.ndarray, text: np.ndarray, speech: np.ndarray) -> np.ndarray:
        frames = x.shape[1]
        size = self.bucket_for(frames)
        if size is None or size == frames:
            return super().__call__(t, x, text, speech)
        extra = size - frames
        noise = np.random.default_rng(0).standard_normal((1, extra, 1), dtype=np.float32)
        noise = np.broadcast_to(noise, (1, extra, x.shape[2])) * np.float32(1.0 - t)
        x = np.concatenate([x, noise.astype(np.float32)], axis=1)
        text = np.concatenate([text, np.repeat(text[:, -1:], extra, axis=1)], axis=1)
        speech = np.concatenate([speech, np.zeros((1, extra, speech.shape[2]), np.float32)], axis=1)
        return self.decoders[size](t, x, text, speech)[:, :frames]


def lecture_segments(engine: ZipVoiceEngine) -> list[tuple[list[int], Any]]:
    """(tokens, prompt) of every distinct segment the engine plans for the lecture."""
    sections = json.loads(LECTURE.read_text(encoding="utf-8"))["sections"]
    prompts = engine.prompts.get(engine.default_voice(), "ko")
    seen: dict[tuple[int, ...], tuple[list[int], Any]] = {}
    for early in (True, False):
        for section in sections:
            for index, text in enumerate(engine.plan(section["text"], "ko", prompts.rest, 1.0, early)):
                prompt = prompts.first if index == 0 and early else prompts.rest
                tokens = engine.table.to_ids(engine.tokenizer.symbols(add_punctuation(text), "ko"))
                seen.setdefault((prompt.frames, *tokens), (tokens, prompt))
    return list(seen.values())


class Reference:
    """A segment generated with the dynamic decoder at a given frame count (cached per count)."""

    def __init__(self, engine: ZipVoiceEngine, decoder: object, tokens: list[int], prompt: Any, steps: int):
        self.engine, self.decoder, self.tokens, self.prompt, self.steps = (
            engine,
            decoder,
            tokens,
            prompt,
            steps,
        )
        self.cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, frames: int) -> tuple[np.ndarray, np.ndarray]:
        """(text condition, mel) of the segment generated as `frames` frames."""
        if frames not in self.cache:
            prompt, tokens = self.prompt, self.tokens
            speed = sampler.speed_for_frames(prompt.frames, len(prompt.tokens), len(tokens), frames)
            condition = self.engine.models.encoder(tokens, prompt.tokens, prompt.frames, speed)
            mel = sampler.euler_sample(self.decoder, condition, prompt.features, self.steps, 0)
            self.cache[frames] = (condition, mel)
        return self.cache[frames]


def deviation(reference: np.ndarray, other: np.ndarray) -> float:
    return float(np.linalg.norm(other - reference) / np.linalg.norm(reference))


def study(model_dir: str, ref_wav: str, precision: str, steps: int) -> dict[str, object]:
    settings = Settings(
        backend="zipvoice-onnx",
        model_dir=model_dir,
        ref_wav=ref_wav,
        state_dir=tempfile.mkdtemp(prefix="padding-study-"),
        precision=precision,
        device="cpu",
    )
    engine = ZipVoiceEngine(settings)
    engine.load()
    dynamic = engine.models.decoder
    session = dynamic.session  # a dynamic session computes any bucket size exactly like a fixed one
    rows: list[dict[str, object]] = []
    for tokens, prompt in lecture_segments(engine):
        sample = Reference(engine, dynamic, tokens, prompt, steps)
        frames = sampler.total_frames(prompt.frames, len(prompt.tokens), len(tokens), 1.0)
        row: dict[str, object] = {"frames": frames, "prompt_frames": prompt.frames}
        for name, buckets in BUCKET_SETS.items():
            for layout, kind in (("front", runtime.BucketedDecoder), ("back", BackPadded)):
                if layout == "back" and name != BACK_ALSO:
                    continue
                decoder = kind(dict.fromkeys(buckets, session), None, engine.guidance_scale)
                length = decoder.aligned_frames(frames) if layout == "front" else frames
                condition, mel = sample(length)
                assert condition.shape[1] == length, (condition.shape, length)
                out = sampler.euler_sample(decoder, condition, prompt.features, steps, 0)
                row[f"{name}|{layout}"] = deviation(mel, out)
                row[f"{name}|size"] = decoder.bucket_for(length)
        rows.append(row)
        figures = " ".join(f"{v:.4f}" for k, v in row.items() if "|" in k and "size" not in k)
        print(f"{frames:5d} frames: {figures}", flush=True)
    return {"model_dir": model_dir, "precision": precision, "steps": steps, "rows": rows}


def table(result: dict[str, object]) -> str:
    rows = result["rows"]
    assert isinstance(rows, list)
    lines = [
        "| buckets (graphs) | layout | segments ≤ 0.5 % | median | p95 | max | decoder frames / real frames |",
        "|---|---|---|---|---|---|---|",
    ]
    frames = np.array([r["frames"] for r in rows], dtype=float)
    for name in BUCKET_SETS:
        sizes = np.array([r[f"{name}|size"] for r in rows], dtype=float)
        cost = float(sizes.sum() / frames.sum())
        for layout in ("front", "back") if name == BACK_ALSO else ("front",):
            values = np.array([r[f"{name}|{layout}"] for r in rows])
            within = float((values <= BOUND).mean())
            lines.append(
                f"| {name} | {layout} | {within:.1%} | {np.median(values):.3%} | "
                f"{np.percentile(values, 95):.3%} | {values.max():.3%} | {cost:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--ref-wav", required=True)
    parser.add_argument("--precision", default="fp32", choices=("fp32", "int8"))
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--json", help="also write the per-segment figures here")
    args = parser.parse_args()
    started = time.perf_counter()
    result = study(args.model_dir, args.ref_wav, args.precision, args.steps)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    rows = result["rows"]
    assert isinstance(rows, list)
    print(
        f"\n{len(rows)} distinct lecture segments, {args.precision}, {args.steps} steps, "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    print(table(result))


if __name__ == "__main__":
    main()
