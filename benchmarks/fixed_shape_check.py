"""Fixed-shape decoder sessions against the dynamic one, at odd and even frame counts, on the CPU.

For each T: a session with N=1 and T fixed and onnxruntime's default optimisations (the failure
the engine works around), the same with ExpandElimination disabled (what the engine does), and the graph specialised
to the shape by onnxslim (what QNN compiles), each compared with the dynamic session by the relative
L2 difference of one decoder call; plus the time of one call and of the specialisation.

    python benchmarks/fixed_shape_check.py --decoder DIR/fm_decoder.onnx --frames 255 256
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from npu_worker.engine import providers, specialize  # noqa: E402
from npu_worker.engine.providers import RuntimeConfig  # noqa: E402
from npu_worker.engine.zipvoice import runtime  # noqa: E402


def call(session: object, inputs: list[np.ndarray]) -> tuple[np.ndarray, float]:
    decoder = runtime.Decoder(session, 3.0)
    started = time.perf_counter()
    out = decoder(0.3, *inputs)
    return out, time.perf_counter() - started


def check(path: Path, frames: int, config: RuntimeConfig) -> list[str]:
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, frames, 100), dtype=np.float32) for _ in range(3)]
    dims = {"N": 1, "T": frames}
    reference, dynamic_s = call(providers.open_session(path, "cpu", config), inputs)
    rows = [f"| {frames} | dynamic session | — | {dynamic_s:.2f} |"]

    def compare(label: str, make: object) -> None:
        try:
            out, seconds = call(make(), inputs)  # type: ignore[operator]
            error = np.linalg.norm(out - reference) / np.linalg.norm(reference)
            rows.append(f"| {frames} | {label} | {error:.1e} | {seconds:.2f} |")
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            rows.append(f"| {frames} | {label} | fails: {str(exc).splitlines()[0][:110]} | — |")

    def default_optimisers() -> object:
        options = providers.fixed_shape_options(config, dims)
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

    compare("N, T fixed, default optimisations", default_optimisers)
    compare(
        "N, T fixed, ExpandElimination off (engine)",
        lambda: providers.open_session(path, "cpu", config, dims),
    )
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        static = specialize.specialise(path, dims, Path(scratch) / path.name)
        label = f"specialised ({time.perf_counter() - started:.0f} s), as QNN gets it"
        compare(label, lambda: providers.open_session(static, "cpu", config, dims))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decoder", required=True, type=Path)
    parser.add_argument("--frames", type=int, nargs="+", default=[255, 256])
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    config = RuntimeConfig(threads=args.threads)
    print(f"{args.decoder}\n")
    print("| T | session | rel. L2 vs dynamic | one call s |\n|---|---|---|---|")
    for frames in args.frames:
        for line in check(args.decoder, frames, config):
            print(line, flush=True)


if __name__ == "__main__":
    main()
