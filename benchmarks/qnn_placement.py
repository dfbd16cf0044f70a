"""Which nodes of a ZipVoice export the QNN HTP backend takes, and which fall back to the CPU.

For the decoder and the text encoder (fp32 and int8 files) this opens one fixed-shape QNN session per
variant — the graph as exported, and specialised to the static shape (npu_worker.engine.specialize) —
with and without a target SoC, and prints the nodes per execution provider, the op types left on the
CPU, the compile time and, for the decoder, the relative L2 difference of one run from the CPU
running the same file and the fp32 file. On x86-64 this is the HTP simulator (onnxruntime-qnn).

    python benchmarks/qnn_placement.py --model-dir DIR [--frames 63] [--tokens 32] [--soc 8gen3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import common  # noqa: F401  (puts the checkout on sys.path)

from npu_worker.engine import providers
from npu_worker.engine.providers import RuntimeConfig

FILES = {
    "decoder": ("fm_decoder.onnx", "fm_decoder_int8.onnx"),
    "encoder": ("text_encoder.onnx", "text_encoder_int8.onnx"),
}


def placement(path: Path, dims: dict[str, int], soc: str, specialise: bool) -> dict[str, Any]:
    """Nodes per provider, CPU op types and compile seconds of one QNN session (or its error)."""
    import onnxruntime as ort

    config = RuntimeConfig(threads=1, allow_htp_simulator=True, qnn_soc=soc)
    options = providers.fixed_shape_options(config, dims)
    options.add_provider_for_devices(providers.qnn_devices(config), config.qnn_provider_options())
    disabled = list(providers.FIXED_SHAPE_DISABLED_OPTIMIZERS)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        graph = path
        if specialise:
            from npu_worker.engine.specialize import specialise as run_specialise

            graph = run_specialise(path, dims, Path(scratch) / path.name)
        prepared = time.perf_counter()
        try:
            session = ort.InferenceSession(str(graph), sess_options=options, disabled_optimizers=disabled)
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            return {"error": str(exc).splitlines()[0][:160]}
    compiled = time.perf_counter()
    deviation = decoder_deviation(session, path, dims["T"]) if "decoder" in path.name else None
    counts: Counter[str] = Counter()
    on_cpu: Counter[str] = Counter()
    for sub in session.get_provider_graph_assignment_info():
        nodes = sub.get_nodes()
        counts[sub.ep_name] += len(nodes)
        if sub.ep_name != "QNNExecutionProvider":
            on_cpu.update(node.op_type for node in nodes)
    return {
        "qnn": counts.get("QNNExecutionProvider", 0),
        "total": sum(counts.values()),
        "cpu_ops": dict(on_cpu.most_common()),
        "specialise_s": prepared - started,
        "compile_s": compiled - prepared,
        "deviation": deviation,
    }


def decoder_deviation(session: Any, path: Path, frames: int) -> tuple[float, float]:
    """Relative L2 of one QNN decoder run against the CPU running the same file and the fp32 file."""
    import numpy as np

    from npu_worker.engine.zipvoice import runtime

    config = RuntimeConfig(threads=1)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, frames, 100), dtype=np.float32) for _ in range(3)]
    on_qnn = runtime.Decoder(session, 3.0)(0.3, *inputs)
    results = []
    for reference in (path, path.with_name("fm_decoder.onnx")):
        on_cpu = runtime.Decoder(providers.open_session(reference, "cpu", config), 3.0)(0.3, *inputs)
        results.append(float(np.linalg.norm(on_qnn - on_cpu) / np.linalg.norm(on_cpu)))
    return results[0], results[1]


def row(model: str, name: str, variant: str, result: dict[str, Any]) -> str:
    if "error" in result:
        return f"| {model} | {name} | {variant} | fails: {result['error']} | | | |"
    share = result["qnn"] / max(1, result["total"])
    ops = ", ".join(f"{op} {n}" for op, n in list(result["cpu_ops"].items())[:8]) or "—"
    seconds = f"{result['specialise_s']:.1f} + {result['compile_s']:.1f}"
    deviation = result["deviation"]
    error = f"{deviation[0]:.2e} / {deviation[1]:.2e}" if deviation else "—"
    nodes = f"{result['qnn']}/{result['total']} ({share:.0%})"
    return f"| {model} | {name} | {variant} | {nodes} | {ops} | {seconds} | {error} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--frames", type=int, default=63, help="decoder bucket (odd)")
    parser.add_argument("--tokens", type=int, default=32, help="encoder token count")
    parser.add_argument("--soc", default="8gen3", help="--qnn-soc target for the targeted variants")
    args = parser.parse_args()
    model_dir = Path(args.model_dir)
    print(
        "| model | file | variant | nodes on QNN | op types on CPU (count) | specialise + compile s "
        "| rel. L2 vs CPU same file / fp32 |"
    )
    print("|---|---|---|---|---|---|---|")
    variants = [
        ("as exported, no target", "none", False),
        (f"as exported, {args.soc}", args.soc, False),
        (f"specialised, {args.soc}", args.soc, True),
        ("specialised, no target", "none", True),
    ]
    for model, names in FILES.items():
        dims = {"N": 1, "T": args.frames if model == "decoder" else args.tokens}
        for name in names:
            path = model_dir / name
            if not path.is_file():
                continue
            for variant, soc, specialise in variants:
                print(row(model, name, variant, placement(path, dims, soc, specialise)), flush=True)


if __name__ == "__main__":
    main()
