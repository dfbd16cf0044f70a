"""Engine speed: RTF, decoder time per step and time to first audio, side by side with sherpa-onnx.

Runs the project engine (`npu_worker.engine.zipvoice.engine.ZipVoiceEngine`) on a model directory
(default: the synthetic `full` model, built once into a cache dir) and, when `sherpa_onnx` imports,
sherpa-onnx's ZipVoice on the same files, the same reference voice and the same thread count. Runs are
interleaved (engine, then sherpa, per utterance / per slide) so load from other processes hits both alike.

Modes:
- utterance: one sentence, synthesised whole by sherpa-onnx and streamed by the engine (median of repeats);
- lecture: the 39-slide Korean lecture, the engine one stream per slide, sherpa-onnx sentence by
  sentence (each sentence its own generate call, as a pipeline without our segmenter would);
  `first_audio_s` is the time to the first audio of slide 0.
Decoder time per step: the engine's own step timings; for sherpa-onnx, (T(8 steps) − T(4 steps)) / 4 on
the utterance when both step counts run (sherpa-onnx does not expose step timings).

    .venv/bin/python benchmarks/engine_rtf.py --variants int8:4 fp32:4 int8:8 fp32:8 --slides 0-38 \\
        --json benchmarks/engine_rtf_full.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnxruntime
import platformdirs
from common import report_header, write_report

from npu_worker.config import Settings
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.zipvoice import model_files
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from npu_worker.engine.zipvoice.segmenter import split_sentences
from npu_worker.engine.zipvoice.tokenizer import add_punctuation
from npu_worker.engine_options import zipvoice_config
from npu_worker.testing.model_folder import REFERENCE_WAV, SYNTHETIC_STAMP
from npu_worker.testing.zipvoice_model import build_model_dir, builder_fingerprint

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"
UTTERANCE = "충전할 때 리튬 이온은 양극에서 빠져나와 전해질을 지나 음극의 흑연 층 사이로 들어갑니다."
TARGETS = {"utterance_ratio": 0.5, "lecture_ratio": 0.6, "first_audio_s": 0.4}


@dataclass
class Timing:
    """One synthesis (or a sum of them): wall seconds, audio seconds, first audio, decoder work."""

    seconds: float = 0.0
    cpu_seconds: float = 0.0  # process CPU time (all threads): less sensitive to other load than wall time
    audio_seconds: float = 0.0
    first_audio_s: float | None = None
    step_seconds: list[float] = field(default_factory=list)
    decoder_frames: int = 0  # Σ frames over decoder calls (prompt frames included)
    prompt_frames: int = 0  # Σ prompt frames over decoder calls
    encoder_seconds: float = 0.0
    vocoder_seconds: float = 0.0
    calls: int = 0  # segments (engine) or sentences (sherpa-onnx)

    @property
    def rtf(self) -> float:
        return self.seconds / self.audio_seconds if self.audio_seconds else float("nan")

    def add(self, other: Timing) -> None:
        if self.first_audio_s is None:
            self.first_audio_s = self.seconds + (other.first_audio_s or other.seconds)
        self.seconds += other.seconds
        self.cpu_seconds += other.cpu_seconds
        self.audio_seconds += other.audio_seconds
        self.step_seconds += other.step_seconds
        for name in ("decoder_frames", "prompt_frames", "calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.encoder_seconds += other.encoder_seconds
        self.vocoder_seconds += other.vocoder_seconds

    def summary(self) -> dict:
        steps = self.step_seconds
        out = {k: v for k, v in asdict(self).items() if k != "step_seconds"}
        out["rtf"] = round(self.rtf, 4)
        out["decoder_seconds"] = round(sum(steps), 3)
        out["step_mean_s"] = round(statistics.fmean(steps), 4) if steps else None
        out["frames_per_step"] = round(self.decoder_frames / self.calls) if self.calls else None
        if steps:  # engine runs: what the wall time is made of
            parts = sum(steps) + self.encoder_seconds + self.vocoder_seconds
            out["other_seconds"] = round(self.seconds - parts, 3)
        return out


class EngineRunner:
    """The project engine on CPU with fixed precision, steps and threads."""

    def __init__(
        self,
        model_dir: Path,
        ref_wav: Path,
        precision: str,
        steps: int,
        threads: int,
        overrides: dict | None = None,
    ) -> None:
        settings = Settings(
            backend="zipvoice-onnx", model_dir=str(model_dir), ref_wav=str(ref_wav), precision=precision,
            num_steps=steps, threads=threads, device="cpu", state_dir=tempfile.mkdtemp(prefix="engine-rtf-"),
        ).replace(**(overrides or {}))  # fmt: skip
        self.engine: ZipVoiceEngine = create(zipvoice_config(settings))
        self.engine.load()

    def run(self, text: str, early_audio: bool = True, lang: str = "ko") -> Timing:
        """One request; `early_audio` asks for a short first segment (a waiting listener) or not (a later
        section of a batch, a whole-file request)."""
        timing = Timing()
        samples = 0
        started, cpu = time.perf_counter(), time.process_time()
        for chunk in self.engine.stream(SynthesisRequest(text=text, lang=lang, early_audio=early_audio)):
            if timing.first_audio_s is None and chunk.size:  # (empty: a step boundary)
                timing.first_audio_s = time.perf_counter() - started
            samples += chunk.size
        timing.seconds = time.perf_counter() - started
        timing.cpu_seconds = time.process_time() - cpu
        timing.audio_seconds = samples / self.engine.info.sample_rate
        for trace in self.engine.traces:
            timing.step_seconds += trace.step_seconds
            timing.decoder_frames += trace.frames
            timing.prompt_frames += trace.prompt_frames
            timing.encoder_seconds += trace.encoder_seconds
            timing.vocoder_seconds += trace.vocoder_seconds
            timing.calls += 1
        return timing

    def symbols(self, text: str, lang: str = "ko") -> list[str]:
        """The engine's phonemes for a text, restricted to the model's tokens (what sherpa-onnx gets)."""
        table = self.engine.table.ids
        return [s for s in self.engine.tokenizer.symbols(add_punctuation(text), lang) if s in table]


class SherpaRunner:
    """sherpa-onnx 2.0.x ZipVoice on the same files; phonemes passed in (its espeak front-end is gone)."""

    def __init__(
        self, files: model_files.ModelFiles, threads: int, guidance: float, steps: int, prompt
    ) -> None:
        import sherpa_onnx

        zipvoice = sherpa_onnx.OfflineTtsZipvoiceModelConfig(
            tokens=str(files.tokens), encoder=str(files.encoder), decoder=str(files.decoder),
            vocoder=str(files.vocoder), feat_scale=0.1, t_shift=0.5, target_rms=0.1, guidance_scale=guidance,
        )  # fmt: skip
        config = sherpa_onnx.OfflineTtsModelConfig(zipvoice=zipvoice, num_threads=threads, provider="cpu")
        self.tts = sherpa_onnx.OfflineTts(sherpa_onnx.OfflineTtsConfig(model=config))
        self.sherpa = sherpa_onnx
        self.steps = steps
        self.reference, self.prompt_symbols, self.prompt_text = prompt

    def run(self, sentences: list[list[str]]) -> Timing:
        """Each sentence its own generate call; first audio = the first call's time."""
        total = Timing()
        for symbols in sentences:
            config = self.sherpa.GenerationConfig()
            config.reference_audio = self.reference
            config.reference_sample_rate = 24000
            config.reference_text = self.prompt_text
            config.num_steps = self.steps
            config.tokens = [self.prompt_symbols, symbols]
            started, cpu = time.perf_counter(), time.process_time()
            audio = self.tts.generate("", config)
            one = Timing(seconds=time.perf_counter() - started, calls=1)
            one.cpu_seconds = time.process_time() - cpu
            one.audio_seconds = len(audio.samples) / audio.sample_rate
            prompt_frames = 1 + len(self.reference) // 256
            one.prompt_frames = prompt_frames
            one.decoder_frames = int(
                np.ceil(prompt_frames / len(self.prompt_symbols) * (len(self.prompt_symbols) + len(symbols)))
            )
            total.add(one)
        return total


def decoder_step_seconds(model_dir: Path, precision: str, threads: int, frames: tuple[int, ...]) -> dict:
    """Best-of-3 time of one decoder call at given frame counts: compares the synthetic model's cost with
    the real model's (figure given for int8, 2 threads, not measured here: ≈ 0.34 s at 470 frames, 0.8–1.0 s at 1220)."""
    from npu_worker.engine.providers import RuntimeConfig, open_session

    files = model_files.locate(str(model_dir), precision, None)
    session = open_session(files.decoder, "cpu", RuntimeConfig(threads=threads))
    rng = np.random.default_rng(0)
    best: dict[int, float] = {}
    for _ in range(3):
        for count in frames:
            x = rng.standard_normal((1, count, 100)).astype(np.float32)
            feeds = {"t": np.array(0.3, np.float32), "x": x, "text_condition": 0.3 * x,
                     "speech_condition": np.zeros_like(x), "guidance_scale": np.array(3.0, np.float32)}  # fmt: skip
            started = time.perf_counter()
            session.run(None, feeds)
            best[count] = min(best.get(count, float("inf")), time.perf_counter() - started)
    return {str(count): round(seconds, 3) for count, seconds in best.items()}


def default_model_dir() -> Path:
    """The synthetic full Distill model, built once (~20 s, ~670 MB) into the user cache."""
    path = (
        Path(platformdirs.user_cache_dir("npu-worker", appauthor=False)) / "synthetic-zipvoice-distill-full"
    )
    try:
        stamp = json.loads((path / SYNTHETIC_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = {}
    if stamp.get("builder") != builder_fingerprint():
        print(f"building the synthetic full model into {path} ...", file=sys.stderr, flush=True)
        build_model_dir(path, "full")
    return path


def parse_slides(spec: str, count: int) -> list[int]:
    chosen: list[int] = []
    for part in spec.split(","):
        low, _, high = part.partition("-")
        chosen += list(range(int(low), int(high or low) + 1))
    return [i for i in chosen if 0 <= i < count]


def load_reference(ref_wav: Path) -> np.ndarray:
    from npu_worker.audio import resample
    from npu_worker.audio_decode import read_wav

    samples, rate = read_wav(ref_wav.read_bytes())
    return resample(samples, rate, 24000).astype(np.float32)


def parse_configs(specs: list[str]) -> dict[str, dict]:
    """`name:field=value,field=value` → {name: Settings overrides}; `name` alone: the defaults."""
    kinds = {f.name: f for f in dataclasses.fields(Settings)}
    configs: dict[str, dict] = {}
    for spec in specs:
        name, _, rest = spec.partition(":")
        overrides: dict = {}
        for item in filter(None, rest.split(",")):
            key, _, value = item.partition("=")
            default = kinds[key].default
            overrides[key] = (value.lower() in ("1", "true")) if isinstance(default, bool) else (
                type(default)(value) if default is not None else (float(value) if "." in value else int(value))
            )  # fmt: skip
        configs[name] = overrides
    return configs


def bench_variant(
    args: argparse.Namespace, model_dir: Path, precision: str, steps: int, slides: list[dict]
) -> dict:
    ref_wav = Path(args.ref_wav or model_dir / REFERENCE_WAV)
    configs = parse_configs(args.configs)
    engines = {
        name: EngineRunner(model_dir, ref_wav, precision, steps, args.threads, overrides)
        for name, overrides in configs.items()
    }
    first = next(iter(engines.values()))
    sherpa = None
    if not args.no_sherpa:
        try:
            files = model_files.locate(str(model_dir), precision, None)
            ref_text = ref_wav.with_suffix(".txt").read_text(encoding="utf-8").strip()
            prompt = (load_reference(ref_wav), first.symbols(ref_text), ref_text)
            sherpa = SherpaRunner(files, args.threads, first.engine.guidance_scale, steps, prompt)
        except ImportError:
            print("sherpa_onnx not importable: engine figures only", file=sys.stderr)
    for engine in engines.values():
        engine.run("안녕하세요.")  # warm-up: sessions, prompt features
    if sherpa:
        sherpa.run([first.symbols("안녕하세요.")])
    result: dict = {"precision": precision, "steps": steps, "guidance_scale": first.engine.guidance_scale,
                    "configs": configs}  # fmt: skip
    if args.mode in ("utterance", "all"):
        runs: dict[str, list[Timing]] = {"sherpa": []}
        for _ in range(args.repeat):
            for name, engine in engines.items():
                runs.setdefault(f"engine:{name}", []).append(engine.run(args.text))
                runs.setdefault(f"engine:{name}:packed", []).append(engine.run(args.text, early_audio=False))
            if sherpa:
                runs["sherpa"].append(sherpa.run([first.symbols(args.text)]))
        result["utterance"] = compare({k: median_run(v) for k, v in runs.items() if v})
    if args.mode in ("lecture", "all") and slides:
        result["lecture"] = run_lecture(engines, sherpa, slides)
    return result


def run_lecture(engines: dict[str, EngineRunner], sherpa: SherpaRunner | None, slides: list[dict]) -> dict:
    """Slide by slide, each engine config then sherpa-onnx; slide 0 asks for early audio, later slides are
    packed (a lecture played from the start: only its first audio is waited for)."""
    totals = {f"engine:{name}": Timing() for name in engines} | {"sherpa": Timing()}
    per_slide = []
    first = next(iter(engines.values()))
    for position, slide in enumerate(slides):
        row: dict = {"idx": slide["idx"]}
        for name, engine in engines.items():
            mine = engine.run(slide["text"], early_audio=position == 0)
            totals[f"engine:{name}"].add(mine)
            row[f"{name}_s"] = round(mine.seconds, 3)
        if sherpa:
            theirs = sherpa.run([first.symbols(s) for s in split_sentences(slide["text"])])
            totals["sherpa"].add(theirs)
            row["sherpa_s"] = round(theirs.seconds, 3)
        per_slide.append(row)
        progress = "  ".join(f"{k} {v.seconds:7.1f} s" for k, v in totals.items())
        print(f"  slide {slide['idx']:>2}: {progress}  load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    out = compare({k: v for k, v in totals.items() if v.calls})
    out["per_slide"] = per_slide
    return out


def median_run(runs: list[Timing]) -> Timing:
    return sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]


def compare(timings: dict[str, Timing]) -> dict:
    """Summaries plus engine/sherpa ratios: of wall time (same text) and of RTF (audio lengths differ a
    little: the engine trims edge silence and shortens the prompt's pauses)."""
    out: dict = {name: t.summary() for name, t in timings.items()}
    if "sherpa" in timings:
        for name in (n for n in timings if n.startswith("engine")):
            out[name]["ratio"] = round(timings[name].seconds / timings["sherpa"].seconds, 3)
            out[name]["rtf_ratio"] = round(timings[name].rtf / timings["sherpa"].rtf, 3)
            out[name]["cpu_ratio"] = round(timings[name].cpu_seconds / timings["sherpa"].cpu_seconds, 3)
    return out


def add_sherpa_step_estimates(results: list[dict]) -> None:
    """sherpa-onnx per-step time = (T8 − T4) / 4 on the utterance, per precision."""
    by_key = {(r["precision"], r["steps"]): r for r in results if "utterance" in r}
    for precision in {p for p, _ in by_key}:
        low, high = by_key.get((precision, 4)), by_key.get((precision, 8))
        if low and high and "sherpa" in low["utterance"] and "sherpa" in high["utterance"]:
            step = (high["utterance"]["sherpa"]["seconds"] - low["utterance"]["sherpa"]["seconds"]) / 4
            for r in (low, high):
                r["utterance"]["sherpa"]["step_mean_s"] = round(step, 4)


def markdown_table(results: list[dict]) -> str:
    """One row per variant, mode and runner; ratio = engine wall time / sherpa-onnx wall time."""
    lines = [
        "| variant | mode | runner | wall s | audio s | RTF | ratio | CPU ratio | decoder s | s/step |"
        " frames/call | calls | first audio s |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for mode in ("utterance", "lecture"):
            for runner, row in (r.get(mode) or {}).items():
                if not isinstance(row, dict) or "seconds" not in row:
                    continue
                cells = [
                    f"{r['precision']} {r['steps']} steps", mode, runner, f"{row['seconds']:.2f}",
                    f"{row['audio_seconds']:.1f}", f"{row['rtf']:.3f}", _fmt(row.get("ratio"), "{:.2f}"),
                    _fmt(row.get("cpu_ratio"), "{:.2f}"), _fmt(row["decoder_seconds"] or None, "{:.2f}"),
                    _fmt(row["step_mean_s"], "{:.3f}"), str(row["frames_per_step"]), str(row["calls"]),
                    _fmt(row["first_audio_s"], "{:.2f}"),
                ]  # fmt: skip
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None, pattern: str) -> str:
    return "–" if value is None else pattern.format(value)


def save_results(args: argparse.Namespace, model_dir: Path, results: list[dict], calibration: dict) -> None:
    table = markdown_table(results)
    print(table)
    report = {
        **report_header(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
        "note": "runners interleaved per utterance and per slide, so load from other processes hits both; "
        "load_average is read at the end of the run",
        "load_average": os.getloadavg(),
        "onnxruntime": onnxruntime.__version__,
        "model_dir": str(model_dir),
        "threads": args.threads,
        "targets": TARGETS,
        "decoder_call_seconds": calibration,
        "results": results,
    }
    write_report(report, args.json, echo=False)
    if args.markdown:
        header = (
            f"Command: `{report['command']}`  \n{report['date']}, {report['machine']}, {report['note']}\n\n"
        )
        Path(args.markdown).write_text(header + table, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", help="model directory (default: synthetic full model in the cache)")
    parser.add_argument("--ref-wav", help="reference voice (default: reference_ko.wav in the model dir)")
    parser.add_argument("--variants", nargs="+", default=["int8:4", "fp32:4", "int8:8", "fp32:8"],
                        help="precision:steps pairs")  # fmt: skip
    parser.add_argument("--mode", choices=("utterance", "lecture", "all"), default="all")
    parser.add_argument("--slides", default="0-38", help="lecture slides, e.g. 0-38 or 0-4,20")
    parser.add_argument("--text", default=UTTERANCE, help="the one utterance")
    parser.add_argument("--repeat", type=int, default=3, help="utterance repeats (median)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-sherpa", action="store_true")
    parser.add_argument(
        "--configs", nargs="+", default=["default"],
        help="engine configs run side by side, each `name:setting=value,...` (Settings fields), e.g. "
        "old:segment_seconds=18,prompt_max_seconds=4 new",
    )  # fmt: skip
    parser.add_argument(
        "--calibrate", action="store_true", help="also time one decoder call at 470 and 1220 frames"
    )
    parser.add_argument("--lecture", default=str(LECTURE))
    parser.add_argument("--json", help="write results here")
    parser.add_argument("--markdown", help="write the results table here")
    args = parser.parse_args(argv)
    model_dir = Path(args.model_dir) if args.model_dir else default_model_dir()
    sections = json.loads(Path(args.lecture).read_text(encoding="utf-8"))["sections"]
    slides = [sections[i] for i in parse_slides(args.slides, len(sections))]
    results = []
    for variant in args.variants:
        precision, _, steps = variant.partition(":")
        print(f"{variant} ...", file=sys.stderr, flush=True)
        results.append(bench_variant(args, model_dir, precision, int(steps), slides))
    add_sherpa_step_estimates(results)
    calibration = {}
    if args.calibrate:
        for precision in sorted({v.partition(":")[0] for v in args.variants}):
            calibration[precision] = decoder_step_seconds(model_dir, precision, args.threads, (470, 1220))
            print(f"decoder call, {precision}: {calibration[precision]} (frames: seconds)", file=sys.stderr)
    save_results(args, model_dir, results, calibration)
    return 0


if __name__ == "__main__":
    sys.exit(main())
