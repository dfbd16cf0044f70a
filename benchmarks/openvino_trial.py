"""Trial, not part of the engine: the decoder under OpenVINO (bf16 on CPUs that have it) against ours.

OpenVINO's CPU plugin fuses the element-wise chains that dominate onnxruntime's decoder call and, on
CPUs with AMX/AVX-512 BF16, infers the fp32 file in bf16 by default. This script times one segment's
four sampling steps at each frame count (a new frame count per segment, as the engine runs them) for
OpenVINO on the fp32 decoder and for the engine's onnxruntime session on the int8 decoder (Swoosh
guards rewritten), and compares both outputs with onnxruntime fp32 (relative L2) at one frame count.

Needs `pip install openvino` (not a dependency of npu-worker); benchmarks/ENGINE_RTF.md has the result.

    python benchmarks/openvino_trial.py --model-dir DIR --frames 198 561 744 890 1101 1500 [--hint f32]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from npu_worker.engine.providers import RuntimeConfig, session_options
from npu_worker.engine.zipvoice.swoosh import rewritten_model

STEPS = 4


def feed(frames: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x, text, speech = (rng.standard_normal((1, frames, 100), dtype=np.float32) for _ in range(3))
    return [np.array(0.3, np.float32), x, text, 0.1 * speech, np.array(3.0, np.float32)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--frames", type=int, nargs="+", default=[198, 561, 744, 890, 1101, 1500])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--hint", help="INFERENCE_PRECISION_HINT, e.g. f32 (default: the plugin's; bf16 on AMX)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    import openvino as ov

    core = ov.Core()
    started = time.perf_counter()
    compiled = core.compile_model(
        core.read_model(str(args.model_dir / "fm_decoder.onnx")),
        "CPU",
        {"INFERENCE_NUM_THREADS": str(args.threads), "PERFORMANCE_HINT": "LATENCY"}
        | ({"INFERENCE_PRECISION_HINT": args.hint} if args.hint else {}),
    )
    report: dict = {
        "command": "python " + " ".join(sys.argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "openvino": ov.__version__,
        "onnxruntime": ort.__version__,
        "openvino_precision": str(compiled.get_property("INFERENCE_PRECISION_HINT")),
        "openvino_compile_s": round(time.perf_counter() - started, 2),
        "load_average_before": os.getloadavg(),
        "segments": [],
    }
    request = compiled.create_infer_request()
    options = session_options(RuntimeConfig(threads=args.threads))
    int8 = ort.InferenceSession(
        rewritten_model(args.model_dir / "fm_decoder_int8.onnx"), options, providers=["CPUExecutionProvider"]
    )
    names = [i.name for i in int8.get_inputs()]
    largest = max(args.frames) + 1
    started = time.perf_counter()
    request.infer(feed(largest))  # OpenVINO reallocates at every new largest shape: warm it once
    report["openvino_warmup_s"] = round(time.perf_counter() - started, 2)
    int8.run(None, dict(zip(names, feed(largest), strict=True)))
    for frames in args.frames:
        inputs = feed(frames)
        ov_steps = []
        for _ in range(STEPS):
            started = time.perf_counter()
            request.infer(inputs)
            ov_steps.append(time.perf_counter() - started)
        started = time.perf_counter()
        for _ in range(STEPS):
            int8.run(None, dict(zip(names, inputs, strict=True)))
        ort_s = time.perf_counter() - started
        row = {
            "frames": frames,
            "openvino_segment_s": round(sum(ov_steps), 3),
            "openvino_first_step_s": round(ov_steps[0], 3),
            "openvino_later_step_s": round(float(np.median(ov_steps[1:])), 3),
            "onnxruntime_int8_segment_s": round(ort_s, 3),
            "ratio": round(sum(ov_steps) / ort_s, 2),
        }
        report["segments"].append(row)
        print(json.dumps(row), flush=True)
    frames = 501
    inputs = feed(frames)
    fp32 = ort.InferenceSession(
        str(args.model_dir / "fm_decoder.onnx"), options, providers=["CPUExecutionProvider"]
    )
    reference = fp32.run(None, dict(zip(names, inputs, strict=True)))[0]
    ours = int8.run(None, dict(zip(names, inputs, strict=True)))[0]
    theirs = next(iter(request.infer(inputs).values()))

    def distance(y: np.ndarray) -> float:
        return float(np.linalg.norm(y - reference) / np.linalg.norm(reference))

    report["relative_l2_to_onnxruntime_fp32_at_501_frames"] = {
        "onnxruntime_int8": round(distance(ours), 5),
        "openvino_fp32_file": round(distance(theirs), 5),
    }
    report["load_average_after"] = os.getloadavg()
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
