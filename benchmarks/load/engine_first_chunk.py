"""The engine's own time to first audio, in-process, per text: the baseline that `npu-worker bench`
subtracts from audible TTFA to show what the server itself adds (`--engine-baseline FILE`).

    .venv/bin/python benchmarks/load/engine_first_chunk.py --backend espeak --out benchmarks/load/espeak-engine.json
    .venv/bin/python benchmarks/load/engine_first_chunk.py --backend zipvoice-onnx --model-dir DIR \\
        --ref-wav DIR/reference.wav --out benchmarks/load/zipvoice-tiny-engine.json

Each text is synthesised `--repeats` times (after one warm-up text) as the scheduler drives the engine
(`engine.stream`, one thread) and the fastest run counts: twice, with `early_audio` on (as for WebSocket
previews: `per_text_first_audible_ms`) and off (as for /synth and NDJSON work: `per_text_whole_ms`, the
time to the whole wav). First audible = the moment the chunk holding the first sustained audible
sample was yielded (same onset rule as the benchmark); in-process TTFA = when that sample would be heard
by a player fed straight from the engine (same playback timeline as the benchmark, no trimming).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

from npu_worker.audio import audible_onset
from npu_worker.bench.onset import PlaybackTimeline
from npu_worker.bench.stats import summarize
from npu_worker.bench.texts_file import DEFAULT_TEXTS, load_texts, texts_digest
from npu_worker.config import Settings
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine_options import build_engine


def time_one(engine, text: str, lang: str, rate: int, early_audio: bool = True) -> dict:
    """First chunk, first audible chunk, in-process audible TTFA and total time (ms) of one synthesis."""
    started = time.perf_counter()
    first_chunk = first_audible = None
    parts: list[np.ndarray] = []
    timeline = PlaybackTimeline(rate)
    for chunk in engine.stream(SynthesisRequest(text=text, lang=lang, early_audio=early_audio)):
        now = (time.perf_counter() - started) * 1000.0
        if chunk.size and first_chunk is None:
            first_chunk = now
        timeline.add(now / 1000.0, chunk.size)
        parts.append(np.asarray(chunk, dtype=np.float32))
        if first_audible is None and audible_onset(np.concatenate(parts), rate) is not None:
            first_audible = now
    audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    onset = audible_onset(audio, rate)
    return {
        "first_chunk_ms": first_chunk,
        "first_audible_ms": first_audible,
        "inprocess_ttfa_ms": None if onset is None else timeline.play_time(onset) * 1000.0,
        "total_ms": (time.perf_counter() - started) * 1000.0,
        "audio_sec": audio.size / rate,
        "leading_silence_ms": None if onset is None else onset / rate * 1000.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="espeak")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--ref-wav", default=None)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--texts", type=Path, default=DEFAULT_TEXTS)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=2, help="runs per text; the fastest counts")
    args = parser.parse_args()
    texts, lang = load_texts(args.texts)
    settings = Settings(
        backend=args.backend,
        model_dir=args.model_dir,
        ref_wav=args.ref_wav,
        precision=args.precision,
        device=args.device,
    )
    engine = build_engine(settings)
    loaded = time.perf_counter()
    engine.load()
    load_seconds = time.perf_counter() - loaded
    info = engine.info
    time_one(engine, texts[0], lang or "ko", info.sample_rate)  # warm-up (first-call allocations)
    runs, whole = [], []
    for text in texts:  # the fastest of `repeats` runs per text: the engine's speed, not the machine's noise
        tries = [time_one(engine, text, lang or "ko", info.sample_rate) for _ in range(args.repeats)]
        runs.append(min(tries, key=lambda r: r["first_audible_ms"] or float("inf")))
        # As the scheduler runs files-only work (/synth, NDJSON): no early first segment.
        tries = [time_one(engine, text, lang or "ko", info.sample_rate, False) for _ in range(args.repeats)]
        whole.append(min(tries, key=lambda r: r["total_ms"]))
    engine.close()
    report = {
        "command": " ".join(["python", *sys.argv]),
        "engine": {
            "backend": info.backend,
            "device": info.device,
            "precision": info.precision,
            "model": info.model,
            "sample_rate": info.sample_rate,
            "load_seconds": round(load_seconds, 2),
        },
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "repeats": args.repeats,
        "texts_sha256": texts_digest(texts),  # `npu-worker bench --engine-baseline` refuses other texts
        "per_text_first_audible_ms": [r["first_audible_ms"] for r in runs],
        "per_text_whole_ms": [r["total_ms"] for r in whole],
        "summary": {key: summarize(r[key] for r in runs) for key in runs[0]},
        "summary_whole": {key: summarize(r[key] for r in whole) for key in whole[0]},
        "runs": runs,
        "runs_whole": whole,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    s = report["summary"]
    print(
        f"{info.backend} on {info.device}: first chunk p50 {s['first_chunk_ms']['p50']:.1f} ms, first audible p50 "
        f"{s['first_audible_ms']['p50']:.1f} ms, total p50 {s['total_ms']['p50']:.1f} ms for "
        f"{s['audio_sec']['p50']:.2f} s of audio ({len(runs)} texts); whole text without early audio p50 "
        f"{report['summary_whole']['total_ms']['p50']:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
