"""`npu-worker prepare` and loading what it wrote: placement, times, sizes, load time, memory, one call.

Runs `npu-worker prepare` (a timed subprocess) with weight sharing off and, with --sharing-too, on; takes
each bucket's placement and specialise/compile seconds from the manifest it writes, and the compiled
context sizes from its qnn/ folder. Then a fresh process builds the engine as `serve --device qnn
--allow-htp-simulator --precision fp32` does, times `engine.load()` on the sharing-off directory (the x86
HTP simulator cannot load a shared context binary) and reports its RSS with every bucket loaded; unless
--no-call, it runs the decoder once at the smallest bucket on QNN and on a CPU session of the same
fm_decoder.onnx (seconds, relative L2). With --precision a16w8/a8w8 the decoder is statically quantised
(calibrated on the engine's own calls) and the manifest's per-bucket quantise seconds and held-out accuracy
are reported too. Whole sentences (--sentences N calibration sentences, or --sentence TEXT ...; seed 1,
one segment each, --num-steps 4) are then spoken by the --engines: the loaded NPU engine (`npu`) and, on
the CPU with fixed shapes, the fp32 files (`cpu_fp32`, the reference), the int8 files (`cpu_int8`) and the
prepared QDQ graph (`cpu_qdq`, rebuilt from the manifest's calibration recipe); each one's log-mel distance
from fp32 is reported. --prepared DIR skips prepare and uses a directory it wrote; --audio-dir keeps each
engine's audio and reuses it, so the simulator's sentence and the CPU's can run in two processes. On x86-64
QNN is the HTP simulator: its speed says nothing about a phone's NPU. Results: benchmarks/QNN_PREPARE.md.

    python benchmarks/qnn_prepare.py --model-dir DIR [--sharing-too] [--no-call] [--optimization fast]
        [--buckets 383 767 ...] [--voice-dir TINY_MODEL_DIR] [--json benchmarks/results/qnn_prepare_X.json]
        [--precision a16w8 [--calibration-texts FILE] [--calibration-calls N] [--check-calls N]
         [--sentences N | --sentence TEXT ...] [--engines npu cpu_fp32 cpu_int8 cpu_qdq] [--audio-dir DIR]]
    python benchmarks/qnn_prepare.py --model-dir DIR --prepared PREPARED --no-call --sentence TEXT \
        [--engines ...] [--audio-dir DIR] [--json ...]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CLI = "import sys; from npu_worker.cli import main; sys.exit(main(sys.argv[1:]))"
VOICE = ("reference_ko.wav", "reference_ko.txt")
PACKAGES = ("onnxruntime", "onnxruntime-qnn", "onnx", "onnxslim", "numpy")
MB = 1e6


def run_prepare(args: argparse.Namespace, out: Path, sharing: str, progress: Any) -> dict[str, Any]:
    """One `npu-worker prepare`: its command, wall seconds and per-bucket figures from its manifest
    (`progress` gets each bucket's progress line as it comes, so a run cut short keeps them)."""
    command = ["prepare", "--model-dir", args.model_dir, "--out", str(out), "--precision", args.precision]
    command += ["--weight-sharing", sharing, "--optimization", args.optimization]
    if args.precision in ("a16w8", "a8w8"):
        command += [
            "--calibration-calls",
            str(args.calibration_calls),
            "--check-calls",
            str(args.check_calls),
        ]
        command += ["--calibration-texts", args.calibration_texts] if args.calibration_texts else []
        command += ["--ref-wav", str(Path(args.voice_dir) / VOICE[0])] if args.voice_dir else []
    command += ["--buckets", *map(str, args.buckets)] if args.buckets else []
    print(f"$ npu-worker {' '.join(command)}", flush=True)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", CLI, *command], stderr=subprocess.PIPE, text=True)
    for line in process.stderr or ():
        print(line, end="", file=sys.stderr, flush=True)
        if line.startswith("bucket "):
            progress(f"sharing {sharing}: {line.strip()}")
    if process.wait():
        raise subprocess.CalledProcessError(process.returncode, command)
    seconds = time.perf_counter() - started
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    files = manifest["sizes"]["compiled"]
    buckets = []
    for size in manifest["buckets"]:
        record = manifest["contexts"][str(size)]
        stem = Path(record["file"]).stem  # fm_decoder@383_ctx: its .onnx and its _qnn.bin, if it has one
        mine = [name for name in files if name == f"{stem}.onnx" or name.startswith(f"{stem}_")]
        place = record["placement"]
        buckets.append(
            {"bucket": size, "nodes": place["nodes"], "on_qnn": place["on_device"]}
            | {"boundary_on_cpu": place.get("boundary", 0)}
            | {"specialise_s": record["specialise_seconds"], "compile_s": record["compile_seconds"]}
            | {"context_bytes": sum(files[name] for name in mine)}
            | {key: record[key] for key in ("quantise_seconds", "kept_in_float", "accuracy") if key in record}
        )
    run = {"command": "npu-worker " + " ".join(command), "weight_sharing": manifest["weight_sharing"]}
    run |= {"precision": manifest["precision"], "runs_as": manifest["runs_as"]}
    run |= {"calibration": manifest["calibration"]} if "calibration" in manifest else {}
    run |= {"prepare_wall_s": round(seconds, 1), "manifest_seconds": manifest["seconds"], "buckets": buckets}
    # the largest child this process has waited for: this prepare (or, with --sharing-too, the other)
    run |= {
        "prepare_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / MB, 1)
    }
    return run | {"files": files, "total_bytes": sum(files.values()), "runtime": manifest["runtime"]}


def rss() -> dict[str, float]:
    status = Path("/proc/self/status").read_text().splitlines()
    vm = next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)  # KiB
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"vmrss_mb": round(vm * 1024 / MB, 1), "maxrss_mb": round(peak * 1024 / MB, 1)}


def load_and_call(model_dir: Path, options: argparse.Namespace) -> dict[str, Any]:
    """In this fresh process: the engine as the server builds it, loaded; then optionally one call and
    whole sentences (without `npu` in `--engines`, only the CPU's sentences: nothing is loaded on QNN)."""
    # What `serve` imports before it loads, soundfile included: libQnnHtp.so exports its own libffi
    # symbols, and cffi loaded after a QNN session cannot read the reference wav (QNN_PREPARE.md).
    import npu_worker.app  # noqa: F401
    from npu_worker.config import Settings
    from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
    from npu_worker.engine_options import zipvoice_config

    sentences = bool(options.sentences or options.sentence)
    result: dict[str, Any] = {"rss_before_load": rss()}
    with tempfile.TemporaryDirectory(prefix="qnn-prepare-state-") as state:
        settings = Settings(
            backend="zipvoice-onnx", model_dir=str(model_dir), ref_wav=str(model_dir / VOICE[0])
        )
        settings = settings.replace(state_dir=state, precision="fp32", device="qnn", allow_htp_simulator=True)
        settings = settings.replace(num_steps=options.num_steps) if sentences else settings
        engine = None
        if "npu" in options.engines or not sentences:
            engine = ZipVoiceEngine(zipvoice_config(settings))
            started = time.perf_counter()
            engine.load()
            result |= {"load_s": round(time.perf_counter() - started, 2), "device": engine.info.device}
            result |= {"precision": engine.info.precision}
            result |= {"placement": engine.info.placement, "rss_loaded": rss()}
            # none: no compiling
            result["files_in_state_dir"] = sorted(p.name for p in Path(state).rglob("*"))
            if not options.no_call:
                result |= decoder_call(engine)
        if sentences:
            result["sentences"] = whole_sentences(engine, settings, options)
    return result


def whole_sentences(engine: Any, settings: Any, options: argparse.Namespace) -> list[dict[str, Any]]:
    """Whole Korean sentences (`--sentence`, or the first `--sentences` calibration sentences), seed 1,
    one segment each, by the engines of `--engines`; each one's log-mel distance from the fp32 CPU audio.

    The CPU engines run fixed shapes (the NPU's padding to the buckets), so only the arithmetic differs:
    `cpu_fp32` (the reference), `cpu_int8` (the CPU's dynamic int8 files, if present) and `cpu_qdq` (the
    prepared bucket's QDQ graph, rebuilt from the manifest's calibration recipe, run by the CPU). With
    `--audio-dir` each engine's audio is kept there and audio from an earlier run is reused, so the
    simulator's sentence and the CPU's can be made by two processes side by side."""
    import numpy as np

    from npu_worker.engine.zipvoice import calibration, qdq

    model_dir = Path(settings.model_dir)
    texts = (
        options.sentence
        or [text for lang, text in calibration.SENTENCES if lang == "ko"][: options.sentences]
    )
    audio_dir = Path(options.audio_dir) if options.audio_dir else None
    engines = {"npu": engine} if engine is not None else {}
    for name in options.engines:
        if name.startswith("cpu_"):
            cpu = cpu_engine(settings, name, model_dir, options)
            if cpu is not None:
                engines[name] = cpu
    rows = []
    for index, text in enumerate(texts):
        if audio_dir is not None:
            audio_dir.mkdir(parents=True, exist_ok=True)
            label = audio_dir / f"{index}.txt"
            if not label.is_file() or label.read_text(encoding="utf-8") != text:
                for stale in audio_dir.glob(f"{index}_*.npy"):  # another sentence's audio
                    stale.unlink()
                label.write_text(text, encoding="utf-8")
        made, seconds = {}, {}
        for name, synth in engines.items():
            started = time.perf_counter()
            made[name] = speak(synth, text)
            seconds[name] = round(time.perf_counter() - started, 1)
            if audio_dir is not None:
                np.save(audio_dir / f"{index}_{name}.npy", made[name])
            print(f"sentence {index}: {name} in {seconds[name]} s", flush=True)
        if audio_dir is not None:  # what an earlier or a parallel run made of the same sentence
            for path in sorted(audio_dir.glob(f"{index}_*.npy")):
                made.setdefault(path.stem.split("_", 1)[1], np.load(path))
        row: dict[str, Any] = {"text": text, "seconds_to_make": seconds}
        row["decoder_frames"] = {name: max(t.frames for t in synth.traces) for name, synth in engines.items()}
        reference = made.pop("cpu_fp32", None)
        if reference is not None and engines:
            any_engine = next(iter(engines.values()))
            spectrum = any_engine.spectrum
            row["seconds_of_audio"] = round(reference.size / any_engine.info.sample_rate, 2)
            row |= {
                name: round(qdq.log_mel_distance(reference, got, spectrum), 5)
                for name, got in sorted(made.items())
            }
        print(f"log-mel distance from fp32 on the CPU: {row}", flush=True)
        rows.append(row)
    return rows


def speak(synth: Any, text: str) -> Any:
    """One sentence, seed 1, as one segment (no short first segment: fewer simulated decoder calls)."""
    import numpy as np

    from npu_worker.engine.base import SynthesisRequest

    request = SynthesisRequest(text, "ko", seed=1, early_audio=False)
    return np.concatenate([chunk for chunk in synth.stream(request) if chunk.size])


def cpu_engine(settings: Any, name: str, model_dir: Path, options: argparse.Namespace) -> Any:
    """A CPU engine for `name` (cpu_fp32, cpu_int8, cpu_qdq) with fixed shapes, or None without its files."""
    from npu_worker.engine.zipvoice import runtime
    from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
    from npu_worker.engine_options import zipvoice_config

    files = "int8" if name == "cpu_int8" else "fp32"
    if files == "int8" and not (model_dir / "fm_decoder_int8.onnx").is_file():
        print(f"{name}: no fm_decoder_int8.onnx in {model_dir}; skipped", flush=True)
        return None
    cpu = ZipVoiceEngine(zipvoice_config(settings.replace(device="cpu", precision=files, fixed_shapes=True)))
    cpu.load()
    if name == "cpu_qdq":
        import onnxruntime as ort

        decoder = cpu.models.decoder
        for size, graph in qdq_graphs_on_cpu(model_dir, options).items():
            session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
            decoder.decoders[size] = runtime.Decoder(session, decoder.decoders[size].guidance_scale)
    return cpu


def qdq_graphs_on_cpu(model_dir: Path, options: argparse.Namespace) -> dict[int, Path]:
    """The prepared directory's QDQ graph per bucket, rebuilt on the CPU the way `prepare` built it: the
    manifest's calibration texts, voice, steps and seed recorded again, the same calls kept and held out,
    quantised by the same code. Kept in `--work-dir` (or beside the audio) for a later run."""
    from npu_worker.cli_prepare_calibration import record_calibration
    from npu_worker.engine.providers import RuntimeConfig
    from npu_worker.engine.zipvoice import qdq
    from npu_worker.engine.zipvoice.runtime import bucket_dims

    manifest = json.loads((model_dir / "manifest.json").read_text())
    made = manifest["calibration"]
    keep = Path(options.work_dir or options.audio_dir or tempfile.mkdtemp(prefix="qdq-on-cpu-"))
    buckets = [int(size) for size in manifest["buckets"]]
    graphs = {size: keep / f"{manifest['precision']}@{size}.onnx" for size in buckets}
    if all(path.is_file() for path in graphs.values()):
        return graphs
    recipe = argparse.Namespace(
        calibration_calls=made["calls_per_bucket"],
        check_calls=made["held_out"],
        calibration_texts=made["texts_source"],
        ref_wav=str(model_dir / made["voice"]["file"]),
        ref_text=None,
        num_steps=made["num_steps"],
        buckets=buckets,
    )
    recording, _ = record_calibration(recipe, model_dir, RuntimeConfig(), print)
    decoder = model_dir / manifest["decoder"]
    for size, dims in bucket_dims(decoder, tuple(buckets)).items():
        feeds = recording.feeds[size]
        feeds = feeds[: len(feeds) - made["held_out"]] if len(feeds) > made["held_out"] else feeds
        keep.mkdir(parents=True, exist_ok=True)
        with qdq.qdq_graph(decoder, dims, manifest["precision"], feeds, keep) as graph:
            shutil.copy(graph, graphs[size])
        print(f"QDQ graph for {size} frames rebuilt on {len(feeds)} calls: {graphs[size]}", flush=True)
    return graphs


def decoder_call(engine: Any) -> dict[str, Any]:
    """One decoder call at the smallest bucket on QNN and on a CPU session of the same file."""
    import numpy as np

    from npu_worker.engine import providers
    from npu_worker.engine.zipvoice import runtime

    decoder = engine.models.decoder
    bucket = min(decoder.buckets)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, bucket, 100), dtype=np.float32) for _ in range(3)]
    started = time.perf_counter()
    on_qnn = decoder.decoders[bucket](0.3, *inputs)
    qnn_s = time.perf_counter() - started
    path = Path(engine.config.model_dir) / "fm_decoder.onnx"
    session = providers.open_session(path, "cpu", engine.config.runtime)
    started = time.perf_counter()
    on_cpu = runtime.Decoder(session, decoder.decoders[bucket].guidance_scale)(0.3, *inputs)
    cpu_s = time.perf_counter() - started
    deviation = float(np.linalg.norm(on_qnn - on_cpu) / np.linalg.norm(on_cpu))
    call = {"bucket": bucket, "qnn_s": round(qnn_s, 2), "cpu_s": round(cpu_s, 3), "rel_l2": deviation}
    return {"call": call, "rss_after_call": rss()}  # with the CPU session opened for the comparison


def machine() -> dict[str, Any]:
    def version(package: str) -> str:
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return "missing"

    cpu = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")]
    memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    about = {"cpu": cpu[0] if cpu else platform.processor(), "cores": os.cpu_count(), "memory_gib": memory}
    about |= {"platform": platform.platform(), "python": platform.python_version()}
    return about | {"versions": {package: version(package) for package in PACKAGES}}


def table(run: dict[str, Any]) -> None:
    print(f"\nweight sharing {'on' if run['weight_sharing'] else 'off'}: {run['command']}")
    print("| bucket | nodes on QNN / total | specialise s | compile s | context MB |\n|---|---|---|---|---|")
    for b in run["buckets"]:
        size, nodes = f"{b['context_bytes'] / MB:.1f}", f"{b['on_qnn']} / {b['nodes']}"
        print(f"| {b['bucket']} | {nodes} | {b['specialise_s']} | {b['compile_s']} | {size} |")
    print(f"prepare {run['prepare_wall_s']} s wall ({run['manifest_seconds']} s in the manifest), ", end="")
    print(f"compiled contexts {run['total_bytes'] / MB:.1f} MB in {len(run['files'])} files, ", end="")
    print(f"prepare's peak RSS {run['prepare_peak_rss_mb']} MB")


def write_json(path: str | None, report: dict[str, Any]) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True, help="ZipVoice model directory (fm_decoder.onnx)")
    parser.add_argument("--buckets", type=int, nargs="+", help="frame buckets (default: prepare's)")
    parser.add_argument("--optimization", default="default", choices=("default", "fast", "best"))
    parser.add_argument("--sharing-too", action="store_true", help="also prepare with weight sharing on")
    parser.add_argument("--no-call", action="store_true", help="skip the simulated decoder call")
    parser.add_argument("--voice-dir", help=f"where to take {' + '.join(VOICE)} if the model lacks them")
    parser.add_argument("--work-dir", help="where the prepared directories go and stay (default: temp)")
    parser.add_argument("--json", help="write the results here (after each step)")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "a16w8", "a8w8"))
    parser.add_argument("--calibration-texts", help="prepare --calibration-texts (default: prepare's)")
    parser.add_argument("--calibration-calls", type=int, default=32, help="prepare --calibration-calls")
    parser.add_argument("--check-calls", type=int, default=2, help="prepare --check-calls")
    parser.add_argument("--sentences", type=int, default=0, help="whole sentences to compare (0-3)")
    parser.add_argument("--sentence", action="append", help="a Korean sentence to compare (repeatable)")
    parser.add_argument("--num-steps", type=int, default=4, help="sampling steps of the whole sentences")
    parser.add_argument(
        "--engines",
        nargs="+",
        default=["npu", "cpu_fp32", "cpu_int8"],
        choices=("npu", "cpu_fp32", "cpu_int8", "cpu_qdq"),
        help="who speaks the whole sentences (cpu_fp32 is the reference)",
    )
    parser.add_argument("--audio-dir", help="keep each engine's sentence audio here and reuse what is there")
    parser.add_argument("--prepared", help="skip prepare: load this prepared directory (sharing off)")
    parser.add_argument("--load-only", help=argparse.SUPPRESS)  # the fresh serving process
    args = parser.parse_args()
    if args.load_only:
        got = load_and_call(Path(args.load_only), args)
        print("LOAD " + json.dumps(got), flush=True)
        return
    report: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "load_average_start": os.getloadavg(),
    }
    if args.prepared:
        report["load"] = load_and_call(Path(args.prepared), args)
        report["load_average_end"] = os.getloadavg()
        write_json(args.json, report)
        return
    report |= {"prepare": [], "progress": []}

    def save() -> None:
        report["load_average_end"] = os.getloadavg()
        write_json(args.json, report)

    progress = lambda line: (report["progress"].append(line), save())  # noqa: E731
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="qnn-prepare-"))
    try:
        for sharing in ("off", "on") if args.sharing_too else ("off",):
            report["prepare"].append(run_prepare(args, work / f"sharing-{sharing}", sharing, progress))
            table(report["prepare"][-1])
            save()
        out = work / "sharing-off"
        for name in VOICE:
            if not (out / name).is_file():
                if not args.voice_dir:
                    sys.exit(f"{out} has no {name}: --voice-dir (npu-worker make-test-model DIR --size tiny)")
                shutil.copy(Path(args.voice_dir) / name, out / name)
        command = [sys.executable, __file__, *sys.argv[1:], "--load-only", str(out)]  # the same options
        print(f"\nloading {out} in a fresh process", flush=True)
        lines = subprocess.run(command, check=True, stdout=subprocess.PIPE)
        got = json.loads(next(x for x in lines.stdout.splitlines() if x.startswith(b"LOAD "))[5:])
        report["load"] = got
        memory, call = got["rss_loaded"], got.get("call")
        print(f"engine.load() {got['load_s']} s on {got['device']}; RSS with every bucket loaded")
        print(f"{memory['vmrss_mb']} MB (VmRSS), peak {memory['maxrss_mb']} MB (maxrss)")
        if call:
            print(f"decoder call at {call['bucket']} frames: QNN {call['qnn_s']} s, CPU {call['cpu_s']} s,")
            print(f"relative L2 {call['rel_l2']:.2e}; peak RSS then {got['rss_after_call']['maxrss_mb']} MB")
    finally:
        save()
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average {report['load_average_start']} -> {report['load_average_end']}")


if __name__ == "__main__":
    main()
