"""`npu-worker prepare`: compile the ZipVoice decoder for the NPU once, into a directory `serve` loads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .engine import qnn_targets

OPTIMIZATION = {"default": None, "fast": "1", "best": "3"}  # QNN's htp_graph_finalization_optimization_mode


def add_prepare_command(commands: argparse._SubParsersAction) -> None:
    from .engine.zipvoice.runtime import DEFAULT_BUCKETS

    parser = commands.add_parser(
        "prepare",
        help="compile the decoder for the NPU ahead of time (a model directory serve loads in seconds)",
        description="Specialise the ZipVoice decoder to each frame bucket and compile it with QNN for the "
        "target SoC, into OUT: a copy of the model directory plus qnn/ and manifest.json. Needs "
        "onnxruntime-qnn (pip install 'npu-worker[qnn]'); on x86 the HTP simulator backend compiles.",
    )
    parser.add_argument("--model-dir", required=True, help="the ZipVoice model directory to prepare")
    parser.add_argument(
        "--out", required=True, help="the prepared directory to write (serve --model-dir OUT)"
    )
    parser.add_argument("--qnn-soc", default="auto", help=f"target Snapdragon: {qnn_targets.names()}")
    parser.add_argument("--buckets", type=int, nargs="+", default=list(DEFAULT_BUCKETS), help="frame buckets")
    parser.add_argument(
        "--precision", default="fp32", choices=("fp32", "int8"), help="decoder file to compile"
    )
    parser.add_argument(
        "--weight-sharing",
        choices=("auto", "on", "off"),
        default="auto",
        help="one copy of the weights for all buckets (auto: on, except on x86 whose simulator cannot load it)",
    )
    parser.add_argument(
        "--optimization",
        choices=sorted(OPTIMIZATION),
        default="default",
        help="QNN graph finalisation: fast compiles quicker (tests), best runs quicker",
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads for specialising (0: cores)")
    parser.set_defaults(handler=run_prepare)


def run_prepare(args: argparse.Namespace) -> int:
    from .engine.providers import QNN_OPTIONS, DeviceUnavailable, RuntimeConfig
    from .engine.zipvoice import model_files, prepared
    from .protocol import ModelLoadError

    options = dict(QNN_OPTIONS)
    mode = OPTIMIZATION[args.optimization]
    if mode is not None:
        options["htp_graph_finalization_optimization_mode"] = mode
    try:
        qnn_targets.resolve(args.qnn_soc)
        files = model_files.locate(args.model_dir, args.precision)
        if Path(args.out).resolve() == files.directory.resolve():
            raise ModelLoadError("--out must be another directory than --model-dir")
        sharing = {"on": True, "off": False}.get(args.weight_sharing, prepared.sharing_by_default())
        config = RuntimeConfig(
            threads=args.threads, allow_htp_simulator=True, qnn_options=options, qnn_soc=args.qnn_soc
        )
        manifest = prepared.prepare(
            files.decoder,
            [files.decoder, files.encoder, files.vocoder],
            Path(args.out),
            config,
            args.buckets,
            args.precision,
            sharing,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except (ValueError, ModelLoadError, DeviceUnavailable) as exc:
        print(f"npu-worker prepare: {exc}", file=sys.stderr)
        return 2
    size = sum(manifest["sizes"]["compiled"].values())
    print(
        f"prepared {args.out}: {len(manifest['buckets'])} buckets in {manifest['seconds']} s, "
        f"compiled contexts {size / 1e6:.1f} MB (weight sharing {'on' if sharing else 'off'}); "
        f"serve it with: npu-worker serve --backend zipvoice-onnx --model-dir {args.out} --device qnn "
        f"--precision {args.precision}"
    )
    return 0
