"""`npu-worker prepare`'s calibration (`--precision a16w8`/`a8w8`): its flags, their check, and the
recording of the decoder's inputs the quantiser is calibrated on, with the voice `serve` then needs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cli_flag_values import prepare_file

if TYPE_CHECKING:
    from .engine.providers import RuntimeConfig
    from .engine.zipvoice.calibration import Recording
    from .engine.zipvoice.model_files import ModelFiles
    from .engine.zipvoice.options import ZipVoiceConfig


def add_calibration_arguments(parser: argparse.ArgumentParser) -> None:
    """The calibration flags, in their own group of `prepare --help` (read only by a16w8 and a8w8)."""
    calibration = parser.add_argument_group("calibration (a16w8, a8w8)")
    calibration.add_argument(
        "--ref-wav",
        type=prepare_file,
        help="reference voice the engine calibrates with (default: the one model dir holds)",
    )
    calibration.add_argument("--ref-text", help="its transcript (default: the .txt beside the wav)")
    calibration.add_argument(
        "--calibration-texts",
        type=prepare_file,
        help="JSON: a lecture ({lang, sections: [{text}]}) or [{text, lang}] (default: the bundled "
        "39-section Korean lecture plus sentences in ko, en, zh, ja)",
    )
    calibration.add_argument(
        "--calibration-calls", type=int, help="recorded decoder calls kept per bucket (default: 32)"
    )
    calibration.add_argument(
        "--check-calls",
        type=int,
        help="more recorded calls per bucket, held out to measure each compiled bucket against fp32 "
        "(default: 2)",
    )
    calibration.add_argument("--num-steps", type=int, help="sampling steps (default: the model's)")


CALIBRATION_DEFAULTS = {"calibration_calls": 32, "check_calls": 2}
CALIBRATION_FLAGS = (
    "ref_wav",
    "ref_text",
    "calibration_texts",
    "calibration_calls",
    "check_calls",
    "num_steps",
)


def check_calibration_flags(args: argparse.Namespace, quantised: bool) -> None:
    """ValueError for a calibration flag given to a prepare that does not calibrate (fp32, int8): it was
    ignored without a word, so `--ref-wav me.wav` or `--num-steps 4` looked as if it had shaped the
    compiled decoder; and for calls out of range, said before the model is read rather than after.
    Fills in the defaults of the counts."""
    given = [name for name in CALIBRATION_FLAGS if getattr(args, name) is not None]
    if given and not quantised:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise ValueError(
            f"{flags}: calibration flags, used only by --precision a16w8 or a8w8 "
            f"(--precision {args.precision} compiles the decoder as it is); leave them out"
        )
    for name, default in CALIBRATION_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.calibration_calls < 1 or args.check_calls < 0:
        raise ValueError("--calibration-calls must be >= 1 and --check-calls >= 0")


def _voice_copied(model_dir: Path, out: str) -> Path:
    """The prepared folder's copy of --model-dir's voice (`prepare` copies the folder's files): serve's
    --ref-wav named the source folder's, which the prepared folder served after it was deleted lacked."""
    return Path(out) / Path(_voice_in(model_dir)).name


def calibrated(
    args: argparse.Namespace, files: ModelFiles, config: RuntimeConfig, report: Callable[[str], None]
) -> tuple[Recording, dict[str, Any], tuple[str, str | None]]:
    """A quantised prepare's calibration (recording, about) and the voice serve needs as --ref-wav,
    run with --out's lock held (`cli_prepare`): a second prepare into it is refused before minutes of it."""
    report(files.said())  # (once nothing refuses it in one line: calibrating takes minutes)
    recording, about = record_calibration(args, files.directory, config, report)
    voice = (os.path.abspath(args.ref_wav or _voice_copied(files.directory, args.out)), args.ref_text)
    return recording, about, voice


def record_calibration(
    args: argparse.Namespace, model_dir: Path, runtime: RuntimeConfig, report: Callable[[str], None]
) -> tuple[Recording, dict[str, Any]]:
    """The engine on the CPU (fp32 files, the reference voice) synthesises the calibration texts, and
    each bucket's decoder inputs are kept (engine/zipvoice/calibration.py)."""
    from .engine.zipvoice import calibration, prepared
    from .engine.zipvoice.engine import ZipVoiceEngine

    ref_wav = args.ref_wav or _voice_in(model_dir)
    texts = (
        calibration.read_texts(Path(args.calibration_texts))
        if args.calibration_texts
        else calibration.default_texts()
    )
    config = _calibration_config(args, model_dir, runtime, ref_wav)
    engine = ZipVoiceEngine(config)
    try:  # its espeak child and sessions end here, not with the command: compiling takes minutes more
        engine.load()
        report(f"calibration: synthesising {len(texts)} texts on the CPU with {Path(ref_wav).name}")
        recording = calibration.record(
            engine,
            tuple(sorted(args.buckets)),
            texts,
            args.calibration_calls + args.check_calls,
            seed=config.seed,
            progress=report,
        )
    finally:
        engine.close()
    about = {
        "texts_source": args.calibration_texts or "default (bundled lecture + sentences)",
        "texts_sha256": calibration.texts_digest(texts),
        "voice": {"file": Path(ref_wav).name, "sha256": prepared.file_hash(Path(ref_wav))},
        "num_steps": engine.num_steps,
        "guidance_scale": engine.guidance_scale,
        "seed": config.seed,
        "calls_per_bucket": args.calibration_calls,
    }
    return recording, about


def _calibration_config(
    args: argparse.Namespace, model_dir: Path, runtime: RuntimeConfig, ref_wav: str
) -> ZipVoiceConfig:
    """The calibrating engine's configuration (fp32 on the CPU), checked before an engine is made:
    ModelLoadError in its words."""
    from .engine.base import Voice
    from .engine.providers import RuntimeConfig
    from .engine.zipvoice.options import ZipVoiceConfig, ZipVoiceOptions
    from .protocol import ModelLoadError

    config = ZipVoiceConfig(
        model_dir=str(model_dir),
        vocoder=args.vocoder,
        precision="fp32",
        device="cpu",
        runtime=RuntimeConfig(threads=runtime.threads),
        num_steps=args.num_steps,
        default_voice=Voice(ref_wav, args.ref_text),
        options=ZipVoiceOptions(buckets=tuple(sorted(args.buckets))),
    )
    try:
        config.validate()
    except ValueError as exc:
        raise ModelLoadError(str(exc)) from None
    return config


def _voice_in(model_dir: Path) -> str:
    """The model directory's one reference voice (`reference*.wav`), or ValueError asking for --ref-wav."""
    found = sorted(model_dir.glob("reference*.wav"))
    if len(found) != 1:
        raise ValueError(
            f"calibration needs a reference voice: pass --ref-wav (found {len(found)} reference*.wav in {model_dir})"
        )
    return str(found[0])
