"""Cold start on QNN: engine load with compiling every decoder bucket vs loading the cached contexts.

`ZipVoiceEngine.load()` is what /health reports as `load_seconds` (the job runner times exactly that
call). The first load specialises and compiles one QNN graph per bucket and writes the compiled
contexts under <state dir>/qnn-cache; the second load with the same state dir reads them back.
On x86-64 this is the HTP simulator.

    python benchmarks/qnn_cold_start.py --model-dir DIR [--buckets 63,127,255] [--precision fp32]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import common  # noqa: F401  (puts the checkout on sys.path)

from npu_worker.config import Settings
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.engine.zipvoice.options import ZipVoiceOptions
from npu_worker.engine_options import zipvoice_config


def timed_load(settings: Settings, buckets: tuple[int, ...]) -> tuple[float, str]:
    config = zipvoice_config(settings)
    engine = ZipVoiceEngine(dataclasses.replace(config, options=ZipVoiceOptions(buckets=buckets)))
    started = time.perf_counter()
    engine.load()
    seconds = time.perf_counter() - started
    device = engine.info.device
    engine.close()
    return seconds, device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--buckets", default="63,127,255")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "int8"))
    parser.add_argument("--soc", default="auto")
    args = parser.parse_args()
    buckets = tuple(int(b) for b in args.buckets.split(","))
    with tempfile.TemporaryDirectory(prefix="qnn-cold-start-") as state:
        settings = Settings(
            backend="zipvoice-onnx",
            model_dir=args.model_dir,
            state_dir=state,
            precision=args.precision,
            device="qnn",
            allow_htp_simulator=True,
            qnn_soc=args.soc,
            threads=1,
        )
        cold, device = timed_load(settings, buckets)
        cache = sorted(p.name for p in (Path(state) / "qnn-cache").iterdir())
        warm, _ = timed_load(settings, buckets)
        cpu, _ = timed_load(settings.replace(device="cpu"), buckets)
    print(f"buckets {list(buckets)}, {args.precision}, device {device}, soc {args.soc}")
    print("| load | seconds |\n|---|---|")
    print(f"| cold: specialise + compile {len(buckets)} QNN graphs | {cold:.1f} |")
    print(f"| warm: cached QNN contexts ({len(cache)} files) | {warm:.1f} |")
    print(f"| CPU, dynamic shapes (for scale) | {cpu:.1f} |")


if __name__ == "__main__":
    main()
