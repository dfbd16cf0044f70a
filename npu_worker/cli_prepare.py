"""`npu-worker prepare`: compile the ZipVoice decoder for the NPU once, into a directory `serve` loads."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli import hear_ctrl_c, stderr_line
from .cli_flag_values import prepare_folder
from .cli_prepare_calibration import add_calibration_arguments, calibrated, check_calibration_flags
from .cli_prepare_serve import serve_said
from .config import MAX_THREADS, THREADS
from .engine import qnn_targets
from .held_signals import how_stopped, start_stops_heard

if TYPE_CHECKING:
    from .engine.providers import RuntimeConfig
    from .engine.zipvoice.calibration import Recording
    from .engine.zipvoice.model_files import ModelFiles
    from .engine.zipvoice.out_claim import OutClaim

OPTIMIZATION = {"default": None, "fast": "1", "best": "3"}  # QNN's htp_graph_finalization_optimization_mode


def add_prepare_command(commands: argparse._SubParsersAction, full: bool = True) -> None:
    """`prepare`; its options only when it is the command (`full`): they import the ZipVoice runtime
    (numpy and the decoder's specialiser), which every `synth` and `batch` paid for at its start."""
    parser = commands.add_parser(
        "prepare",
        help="compile the decoder for the NPU ahead of time (a model directory serve loads in seconds)",
        description="Specialise the ZipVoice decoder to each frame bucket and compile it with QNN for the "
        "target SoC, into OUT: a copy of the model directory plus qnn/ and manifest.json. Needs "
        "onnxruntime-qnn (pip install '.[qnn]' in the npu-worker checkout); on x86 the HTP simulator backend compiles.",
    )
    if not full:
        return
    _add_folder_arguments(parser)
    _add_compile_arguments(parser)
    parser.set_defaults(handler=run_prepare, hears_stops=True)  # (`start_stops_heard` first thing)


def _add_folder_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the model comes from and where the prepared directory goes."""
    parser.add_argument(
        "--model-dir", required=True, type=prepare_folder, help="the ZipVoice model directory to prepare"
    )
    # `~` expanded as --model-dir's is (a shell leaves `--out=~/m-qnn` as written): it made a folder
    # named `~` in the current one, and the `serve` line printed named `'~/m-qnn'`, which serve expands.
    parser.add_argument(
        "--out",
        required=True,
        type=prepare_folder,
        help="the prepared directory to write (serve --model-dir OUT)",
    )
    parser.add_argument(
        "--vocoder",
        help="the Vocos vocoder when it is not in or beside --model-dir (copied into OUT as vocos_24khz.onnx)",
    )


def _add_compile_arguments(parser: argparse.ArgumentParser) -> None:
    """How the decoder is specialised, quantised and compiled: target, buckets, precision, threads."""
    from .engine.zipvoice.runtime import DEFAULT_BUCKETS

    parser.add_argument("--qnn-soc", default="auto", help=f"target Snapdragon: {qnn_targets.names()}")
    parser.add_argument("--buckets", type=int, nargs="+", default=list(DEFAULT_BUCKETS), help="frame buckets")
    parser.add_argument(
        "--precision",
        default="fp32",
        choices=("fp32", "int8", "a16w8", "a8w8"),
        help="fp32: the fp32 decoder (HTP computes it in fp16); int8: the CPU-quantised file; a16w8/a8w8: "
        "the fp32 decoder statically quantised (8-bit weights, 16/8-bit activations) on calibration calls",
    )
    add_calibration_arguments(parser)
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
    parser.add_argument(
        "--threads",
        type=_threads,
        default=0,
        help=f"CPU threads for specialising, 0 to {MAX_THREADS} (0: cores)",
    )


def _threads(text: str) -> int:
    """`serve --threads`'s bound, said in argparse's words (a negative count was taken as 0)."""
    try:
        return THREADS(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_prepare(args: argparse.Namespace) -> int:
    """Ctrl-C anywhere (importing, compiling, printing the result or an error's line) is one line and
    130: one that came after `prepare()` returned, or inside the error handler, was a traceback. Once
    this run's manifest is in --out (moved in last) the folder is complete, and the line says so: it
    said "run it again" (minutes of compiling, hours on the simulator) for a prepared folder. A SIGTERM
    (`timeout`, a service manager, a CI job cancelled) or SIGHUP (a closed terminal) unwinds the same
    way, 143 or 129: it ended the process at once, with no word, and left its staging (a copy of every
    model file and a specialised decoder as large as the decoder) in --out until the next prepare.
    One that comes while QNN compiles a bucket is acted on when that compile returns (C code: no
    handler runs inside it), docs/zipvoice.md says so."""
    hear_ctrl_c()  # started as `cmd &` by a script: Ctrl-C (or kill -INT) still stops it cleanly
    earlier: list[tuple[int, int, int] | None] = []  # the manifest found at the start, once known
    try:
        with start_stops_heard():
            earlier.append(_manifest_identity(Path(args.out)))
            return _prepare(args)
    except KeyboardInterrupt as stopped:  # a line, not a traceback; `serve` refuses what is left
        word, status = how_stopped(stopped)
        now = _manifest_identity(Path(args.out)) if earlier else None
        if now is not None and [now] != earlier:
            stderr_line(
                f"npu-worker prepare: {word} once {args.out} was prepared: it is complete "
                f"(serve it with --model-dir {os.path.abspath(args.out)})"
            )
        else:
            stderr_line(f"npu-worker prepare: {word}; run it again to prepare {args.out}")
        return status


def _manifest_identity(out: Path) -> tuple[int, int, int] | None:
    """Which manifest `out` holds (device, inode, mtime), None for none: a prepare writes its own in
    its staging while the earlier one is still in place, so a manifest another than the one found at
    the start is this run's, moved in once every bucket was compiled and checked."""
    from .engine.zipvoice.prepared import MANIFEST

    try:
        found = os.stat(out / MANIFEST, follow_symlinks=False)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_mtime_ns


def _prepare(args: argparse.Namespace) -> int:
    from .engine.providers import DeviceUnavailable
    from .engine.zipvoice import out_claim, prepare, prepared, qdq
    from .errors import counted
    from .protocol import WorkerError

    # Whatever the umask, no one else may change what `serve` will load: under umask 000 the --out
    # folder came out 0777, was then refused as one others can write in, and was left so.
    os.umask(os.umask(0) | 0o022)
    files_precision = prepared.PRECISIONS[args.precision][0]
    try:
        files = _checked_sources(args, files_precision)
        sharing = {"on": True, "off": False}.get(args.weight_sharing, prepare.sharing_by_default())
        config = _prepare_runtime(args)
        with contextlib.ExitStack() as held:  # --out's lock, from before calibration to the end
            recording, about, voice, claim = None, None, None, None  # voice: serve's --ref-wav
            if qdq.is_quantised(args.precision):
                prepare.check_plan(args.buckets, sharing, args.check_calls)  # before minutes of calibration
                claim = held.enter_context(out_claim.claim_out(Path(args.out), config))
                recording, about, voice = calibrated(args, files, config, progress)
            manifest = _compiled(args, files, config, sharing, recording, about, claim)
    except (ValueError, WorkerError, DeviceUnavailable, OSError) as exc:  # OSError: a full disk, say
        print(f"npu-worker prepare: {exc}", file=sys.stderr)
        return 2
    size, count = sum(manifest["sizes"]["compiled"].values()), len(manifest["buckets"])
    print(
        f"prepared {args.out}: {counted(count, 'bucket', 'buckets')} in {manifest['seconds']} s, "
        f"compiled contexts {size / 1e6:.1f} MB (weight sharing {'on' if sharing else 'off'}); "
        # absolute: a relative --out's line named a folder only from where prepare ran
        + serve_said(os.path.abspath(args.out), files_precision, voice, args.qnn_soc, sharing and count > 1)
    )
    return 0


def _compiled(
    args: argparse.Namespace,
    files: ModelFiles,
    config: RuntimeConfig,
    sharing: bool,
    recording: Recording | None,
    about: dict[str, Any] | None,
    claim: OutClaim | None,
) -> dict[str, Any]:
    """`prepare.prepare` with the flags (`claim`: --out's, held since before the calibration)."""
    from .engine.zipvoice import prepare

    return prepare.prepare(
        files.decoder,
        [files.decoder, files.encoder, files.vocoder, files.tokens],
        Path(args.out),
        config,
        args.buckets,
        args.precision,
        sharing,
        progress=progress,
        calibration=recording,
        calibration_info=about,
        check_calls=args.check_calls if recording is not None else 0,
        vocoder=files.vocoder,
        # which of the layouts and precisions a folder may hold it took, and the vocoder
        files_said=None if recording is not None else files.said(),
        claimed=claim,
    )


def _checked_sources(args: argparse.Namespace, files_precision: str) -> ModelFiles:
    """The model files to prepare from, every flag and file checked before minutes of calibration and
    compiling (each refusal a ValueError or WorkerError naming it)."""
    from .engine.zipvoice import model_files, qdq, vocoder
    from .engine.zipvoice.runtime import check_buckets
    from .protocol import ModelLoadError

    check_calibration_flags(args, qdq.is_quantised(args.precision))
    _check_target(args.qnn_soc)
    check_buckets(tuple(args.buckets))  # before minutes of calibration
    files = model_files.locate(args.model_dir, files_precision, args.vocoder, missing_said(args.precision))
    _refuse_unfinished_source(files.directory)
    if Path(args.out).resolve() == files.directory.resolve():
        raise ModelLoadError("--out must be another directory than --model-dir")
    vocoder.check_file(files.vocoder, files.decoder)  # (copied in as it is: serve would refuse it)
    if qdq.is_quantised(args.precision):
        qdq.refuse_unscalable_decoder(files.decoder)  # (it was refused per bucket, after calibrating)
    _check_loads(files.encoder, "the text encoder")  # (the same: prepared, then refused by serve)
    _check_token_table(files.tokens)  # (the same)
    return files


def _prepare_runtime(args: argparse.Namespace) -> RuntimeConfig:
    """The QNN runtime the buckets are compiled with: `--optimization`, `--threads`, `--qnn-soc`."""
    from .engine.providers import QNN_OPTIONS, RuntimeConfig

    options = dict(QNN_OPTIONS)
    mode = OPTIMIZATION[args.optimization]
    if mode is not None:
        options["htp_graph_finalization_optimization_mode"] = mode
    return RuntimeConfig(
        threads=args.threads, allow_htp_simulator=True, qnn_options=options, qnn_soc=args.qnn_soc
    )


def _check_target(value: str) -> None:
    """ValueError for a --qnn-soc no compile can use here: an unknown one, and on x86 none (or blank,
    read as none) at all: the HTP simulator finalises no decoder without a target. It was specialised
    first (minutes at full size), then "QNN could not compile ...: QNN_COMMON_ERROR_MEM_ALLOC: Memory
    allocation related error", which sent the operator to look for memory."""
    if qnn_targets.resolve(value) is None and qnn_targets.htp_is_simulated():
        raise ValueError(
            f"--qnn-soc {value.strip() or repr(value)}: the x86 HTP simulator compiles for a named target only "
            "(without one QNN fails to finalise the decoder, QNN_COMMON_ERROR_MEM_ALLOC); leave it auto "
            f"({qnn_targets.SIMULATOR_DEFAULT} here) or name the device's SoC: "
            f"{', '.join(qnn_targets.TARGETS)}, a part number or a soc_model number"
        )


def missing_said(precision: str) -> str | None:
    """What a prepare whose model files are missing is told to try (None: the other precision).
    `--precision a16w8` on sherpa-onnx's int8-only release was told "try --precision int8" after a
    missing "(fp32)" file, with no word that a16w8 is calibrated from the fp32 files."""
    if precision not in ("a16w8", "a8w8"):
        return None
    return (
        f"--precision {precision} quantises the fp32 files: prepare from a folder that holds them, or"
        " compile the int8 files as they are with --precision int8"
    )


def _refuse_unfinished_source(model_dir: Path) -> None:
    """ModelLoadError for a --model-dir that is a prepare's output without its manifest: `serve` refuses
    it as unfinished, but `prepare` took it as a plain model and prepared it, though a re-prepare from
    another model cut short leaves some files of each."""
    from .engine.zipvoice import prepared
    from .protocol import ModelLoadError

    state = prepared.unfinished(model_dir)
    if state is not None:
        raise ModelLoadError(
            f"--model-dir {model_dir} is the output of an `npu-worker prepare` that {state}: its files "
            "may be some of two models'; prepare from the model directory that one prepared from"
        )


def _check_loads(path: Path, what: str) -> None:
    """ModelLoadError unless onnxruntime reads `path` (on the CPU, unoptimised: no minutes of compiling
    for a folder `serve` then refuses, "cannot load ...text_encoder.onnx")."""
    import onnxruntime as ort

    from .protocol import ModelLoadError

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    try:
        ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ModelLoadError(f"cannot load {path} as {what}: {exc}") from exc


def _check_token_table(path: Path) -> None:
    """ModelLoadError unless `serve` reads `path` as a token table: a tokens.txt cut short mid-line (or
    empty) was copied in and compiled for, then every `serve` of the prepared folder refused it."""
    from .engine.zipvoice.tokenizer import TokenTable

    TokenTable.load(path)


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
