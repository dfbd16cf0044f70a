"""`npu-worker prepare`, the compiling side: per bucket, the static (and, for a QDQ precision, quantised)
decoder graph compiled by QNN into an EPContext model, checked against the fp32 decoder on the CPU, all
in a staging folder moved into the output only once complete (an earlier prepare's output stays whole
until then), and the manifest written last (only a complete directory has one). The output folder's
claim (checked, made and locked before a calibration) is out_claim.py's, its checks, lock and copy
prepare_out.py's, one bucket's compile and check bucket_compile.py's; the format, the manifest's
checks and the loading side are prepared.py's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npu_worker.engine import qnn_targets, specialize
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice import qdq
from npu_worker.engine.zipvoice.bucket_compile import cpu_reference
from npu_worker.engine.zipvoice.bucket_runs import Compiling, compile_buckets
from npu_worker.engine.zipvoice.model_files import VOCODER_NAMES
from npu_worker.engine.zipvoice.out_claim import OutClaim, claim_out
from npu_worker.engine.zipvoice.prepare_out import (
    _copy_model_files,
    cannot_write,
    check_out_dir,
    out_dir_lock,
)
from npu_worker.engine.zipvoice.prepared import (
    CONTEXT_DIR,
    EARLIER,
    FORMAT,
    LOCK,
    MANIFEST,
    PRECISIONS,
    STAGING,
    Progress,
    file_hash,
    prepared_from,
    read_manifest,
    runtime_versions,
    target_options,
)
from npu_worker.files import write_atomic
from npu_worker.held_signals import signals_held
from npu_worker.leftovers import remove_all_parts
from npu_worker.protocol import ModelLoadError

if TYPE_CHECKING:
    from npu_worker.engine.zipvoice.calibration import Recording

__all__ = [
    "LOCK",
    "check_out_dir",
    "check_plan",
    "out_dir_lock",
    "prepare",
    "sharing_by_default",
]


def check_plan(buckets: Sequence[int], weight_sharing: bool, check_calls: int) -> None:
    """Refuse, before any calibration, a prepare whose held-out check cannot run here: the x86 HTP
    simulator cannot load a weight-shared binary of several buckets (the process crashes: SIGSEGV)."""
    if weight_sharing and check_calls and len(set(buckets)) > 1 and qnn_targets.htp_is_simulated():
        raise ModelLoadError(
            "--weight-sharing on: the x86 HTP simulator cannot load a weight-shared binary of several "
            "buckets (it crashes the process), so the held-out calls cannot check it here; pass "
            "--check-calls 0, --weight-sharing off or one bucket"
        )


def vocoder_copy(model_dir: Path, vocoder: Path | None) -> dict[str, Path]:
    """The vocoder to copy into the prepared folder as `vocos_24khz.onnx`, the first name `serve`
    looks for: one beside the model folder or named by `--vocoder` (any name, anywhere), so the
    prepared folder serves alone wherever it is moved; none when the model folder holds it so."""
    if vocoder is None or vocoder.resolve() == (model_dir / VOCODER_NAMES[0]).resolve():
        return {}
    return {VOCODER_NAMES[0]: vocoder}


def model_name(model_dir: Path) -> str:
    """The model folder's name for the manifest: of a `--model-dir` link (`current ->
    zipvoice_distill-v2`), the name of the folder it names where that one says Distill and the link's
    does not (the link's was kept, and the prepared folder ran a Distill model with 16 steps, guidance
    1.0, while `serve --model-dir current` knew it); else the name given."""
    given, real = model_dir.name, Path(os.path.realpath(model_dir)).name
    return real if "distill" in real.lower() and "distill" not in given.lower() else given


def _name_in(path: Path, vocoder: Path | None) -> str:
    """A source file's name in the prepared folder (the manifest's `source` keys)."""
    return VOCODER_NAMES[0] if vocoder is not None and path == vocoder else path.name


def _staged_hashes(sources: Sequence[Path], staging: Path, vocoder: Path | None) -> dict[str, str]:
    """The SHA-256 of each source file's copy in the staging (what `serve` checks and loads), by its
    name there. The source's own, hashed once every bucket was compiled, was another file's where the
    model was re-exported in place meanwhile: the buckets after it compiled from the new decoder, the
    folder held the old one, and `serve` refused the folder `prepare` had said was prepared."""
    hashes = {}
    for path in sources:
        name = _name_in(path, vocoder)
        copy = staging / name
        hashes[name] = file_hash(copy if copy.is_file() else path)  # (a file from outside the model dir)
    return hashes


def sharing_by_default(machine: str | None = None) -> bool:
    """Weight sharing unless on x86, where the HTP backend is the simulator that cannot load it."""
    return not qnn_targets.htp_is_simulated(machine)


def prepare(
    decoder: Path,
    sources: Sequence[Path],
    out: Path,
    config: RuntimeConfig,
    buckets: Sequence[int],
    precision: str,
    weight_sharing: bool,
    progress: Progress = print,
    calibration: Recording | None = None,
    calibration_info: dict[str, Any] | None = None,
    check_calls: int = 0,
    vocoder: Path | None = None,
    files_said: str | None = None,
    claimed: OutClaim | None = None,
) -> dict[str, Any]:
    """Compile `decoder` for every bucket into `out` (a copy of the model directory, and `vocoder`
    where it is not in that directory by the name `serve` looks for first); the manifest.

    A quantised `precision` (qdq.QUANTISED) needs `calibration`: its feeds per bucket, of which the last
    `check_calls` are held out to measure each compiled bucket against the fp32 decoder on the CPU.
    `files_said`: the model files chosen, said once the work starts (a refusal before it is one line).
    `claimed`: `out`'s claim, held by the caller since before its calibration (else taken here)."""
    from npu_worker.engine.zipvoice.runtime import bucket_dims

    _check_precision(precision, calibration)
    check_plan(buckets, weight_sharing, check_calls if calibration is not None else 0)
    shapes = bucket_dims(decoder, tuple(buckets))  # a bad bucket: refused before `out` changes
    with contextlib.ExitStack() as held:  # the lock, held to the end: a second prepare here is refused
        claim = claimed or held.enter_context(claim_out(out, config))
        if claim.folder != out:
            raise ValueError(f"prepare into {out} was handed the claim on {claim.folder}")
        claim.writing = True
        if files_said:
            progress(files_said)
        remove_all_parts(out)  # the temp copies of a prepare killed while copying (a model's size each)
        with _staging_in(out) as staging:
            sizes = _copy_model_files(
                decoder.parent, staging, extra=vocoder_copy(decoder.parent, vocoder), shown=out
            )
            checked = calibration is not None and bool(check_calls)
            plan = _plan(staging / decoder.name, config, claim, precision, weight_sharing, progress, checked)
            manifest = _compiled(
                plan, decoder, shapes, calibration, calibration_info, check_calls, sources, vocoder, sizes
            )
            _write_manifest(manifest, staging, out)
            _move_in(staging, out)
            return manifest


def _check_precision(precision: str, calibration: Recording | None) -> None:
    """Refuse a precision `prepare` does not know, and a quantised one without its calibration."""
    if precision not in PRECISIONS:
        raise ModelLoadError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    if qdq.is_quantised(precision) and calibration is None:
        raise ModelLoadError(f"--precision {precision} needs calibration data")


def _plan(
    staged: Path,
    config: RuntimeConfig,
    claim: OutClaim,
    precision: str,
    weight_sharing: bool,
    progress: Progress,
    checked: bool,
) -> Compiling:
    """What each bucket is compiled with: `staged`, the decoder's copy in the staging (compiled, checked and
    hashed: the copy `serve` will load), its contexts beside it, the claim's devices and folder (named in
    errors), and where held-out feeds are `checked`, the fp32 reference they are checked against on the CPU."""
    reference = cpu_reference(staged, config) if checked else None
    devices, contexts_dir = claim.devices, staged.parent / CONTEXT_DIR
    return Compiling(
        staged, contexts_dir, config, devices, reference, precision, weight_sharing, claim.folder, progress
    )


def _compiled(
    plan: Compiling,
    decoder: Path,
    shapes: dict[int, dict[str, int]],
    calibration: Recording | None,
    calibration_info: dict[str, Any] | None,
    check_calls: int,
    sources: Sequence[Path],
    vocoder: Path | None,
    model_sizes: dict[str, int],
) -> dict[str, Any]:
    """Every bucket of `shapes` compiled in the staging (`plan`), and the manifest that records them: the
    calibration's summary, the staged copies' hashes, the sizes (`model_sizes`: the model files copied)."""
    started = time.monotonic()
    contexts = compile_buckets(plan, shapes, calibration, check_calls)
    calibrated = (
        (calibration_info or {}) | calibration.summary() | {"held_out": check_calls}
        if calibration is not None
        else None
    )
    # hashed before `seconds` is read: the time said is the whole prepare's, as before the split
    staging = plan.staged.parent
    compiled, source = _sizes_in(plan.contexts_dir), _staged_hashes(sources, staging, vocoder)
    manifest = _manifest(decoder, plan, contexts, time.monotonic() - started, calibrated)
    manifest["source"], manifest["sizes"] = source, {"model_files": model_sizes, "compiled": compiled}
    return manifest


@contextlib.contextmanager
def _staging_in(out: Path) -> Iterator[Path]:
    """The staging folder inside `out`, with its contexts folder, removed at the end whatever happens.
    Everything is made there first: until it is all compiled and checked, an earlier prepare's folder
    stays whole and servable (a bucket that failed to compile had cost it its manifest and contexts:
    minutes of compiling on the device, hours on the simulator)."""
    staging = out / STAGING
    _clear_staging(staging)  # what a prepare killed half-way left
    try:
        staging.mkdir()
    except OSError as exc:
        raise ModelLoadError(cannot_write(exc, f"make {staging}, where a prepare writes first", out)) from exc
    try:
        try:
            (staging / CONTEXT_DIR).mkdir()
        except OSError as exc:
            raise ModelLoadError(cannot_write(exc, f"make {staging / CONTEXT_DIR}", out, staging)) from exc
        yield staging
    finally:
        with signals_held():  # a second Ctrl-C or a SIGTERM now cut it short
            shutil.rmtree(staging, ignore_errors=True)


def _manifest(
    decoder: Path,
    plan: Compiling,
    contexts: dict[str, Any],
    seconds: float,
    calibrated: dict[str, Any] | None,
) -> dict[str, Any]:
    """The manifest of a prepare whose buckets compiled into `contexts` (its `source` hashes and `sizes`
    are the caller's to add, from the staging)."""
    manifest = {
        "format": FORMAT,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        # its name may be what says "distill" (prepared_from), kept when preparing a prepared folder
        "model_dir": prepared_from(decoder.parent) or model_name(decoder.parent),
        "decoder": decoder.name,
        "precision": plan.precision,
        "files": PRECISIONS[plan.precision][0],
        "runs_as": PRECISIONS[plan.precision][1],
        "buckets": [int(size) for size in contexts],
        "target": {
            "qnn_soc": plan.config.qnn_soc,
            "provider_options": target_options(plan.config.qnn_provider_options()),
        },
        "runtime": runtime_versions(),
        "specialiser": specialize.VERSION,
        "weight_sharing": plan.share,
        "source": {},
        "contexts": contexts,
        "sizes": {},
        "seconds": round(seconds, 1),
    }
    if calibrated is not None:
        manifest["calibration"] = calibrated
    return manifest


def _sizes_in(folder: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in sorted(folder.iterdir())}


def _write_manifest(manifest: dict[str, Any], staging: Path, out: Path) -> None:
    """Written into the staging before anything in `out` changes (a disk filled by the contexts failed it
    after the earlier manifest was gone: neither folder servable), moved in last: only a complete directory
    has a manifest. 0644: `serve` runs as the service's user, `prepare` often as root (a 0600 manifest:
    ModelLoadError)."""
    try:
        write_atomic(staging / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"), mode=0o644)
    except OSError as exc:  # (every bucket compiled: the minutes are lost, the folder is not)
        failed = cannot_write(exc, f"write the manifest {out / MANIFEST}", out, staging)
        if os.path.lexists(out / MANIFEST):
            failed += f"; the earlier prepare's {out} is left as it was"
        raise ModelLoadError(failed) from exc


def _clear_staging(staging: Path) -> None:
    """Remove what is at `staging`: a folder a killed prepare left, or a link or file of that name (never
    followed; it was refused as "[Errno 17] File exists: '.../.prepare-staging'", no fix said, for
    good). ModelLoadError naming it when it cannot be removed."""
    try:
        if staging.is_symlink() or (os.path.lexists(staging) and not staging.is_dir()):
            staging.unlink()
        elif staging.is_dir():
            shutil.rmtree(staging)
    except OSError as exc:
        raise ModelLoadError(
            f"cannot remove {staging}, which an earlier prepare left ({exc.strerror or exc}); remove it"
        ) from exc


def _move_in(staging: Path, out: Path) -> None:
    """The staged model files, contexts and manifest into `out`, in place of an earlier prepare's, by
    renames only (nothing to write: a full disk cannot stop them half-way): the earlier manifest goes
    first and the new one comes last, so a prepare killed within these renames leaves a folder `serve`
    refuses as unfinished; the model files it copied in that this one does not are removed
    (`_earlier_files`). The earlier manifest is kept aside as EARLIER until the end: a prepare killed
    half-way knew nothing of the earlier files any more, so its rerun left them (the earlier layout's
    `fm_decoder.onnx` found before the new `decoder.onnx`: serve refused the folder)."""
    stale = _earlier_files(out)
    if os.path.lexists(out / MANIFEST):
        os.replace(out / MANIFEST, out / EARLIER)
    for path in sorted(staging.iterdir()):
        if path.name not in (CONTEXT_DIR, MANIFEST):
            os.replace(path, out / path.name)
            stale.discard(path.name)
    for name in sorted(stale):
        if (out / name).is_symlink() or (out / name).is_file():  # (never a folder of that name)
            (out / name).unlink()
    if os.path.lexists(out / CONTEXT_DIR):  # (a folder: moved aside whole, removed with the staging)
        os.rename(out / CONTEXT_DIR, staging / f"old-{CONTEXT_DIR}")
    os.rename(staging / CONTEXT_DIR, out / CONTEXT_DIR)
    os.replace(staging / MANIFEST, out / MANIFEST)
    (out / EARLIER).unlink(missing_ok=True)


def _earlier_files(out: Path) -> set[str]:
    """The model files an earlier prepare's manifest says it copied into `out` (plain names only).
    Left beside this prepare's, they were served instead: prepared from an official export
    (`text_encoder.onnx`, `fm_decoder.onnx`) and then from a sherpa-onnx release (`encoder.onnx`,
    `decoder.onnx`), the folder held both, `serve` took the first layout's files and refused them as
    "not the decoder it was prepared from", and no prepare again cleared them."""
    names: set[str] = set()
    for manifest in (MANIFEST, EARLIER):  # (EARLIER: an earlier manifest a killed prepare put aside)
        try:
            listed = json.loads(read_manifest(out, manifest))["sizes"]["model_files"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        if isinstance(listed, dict):
            names.update(
                name
                for name in listed
                if isinstance(name, str)
                and name not in (".", "..", MANIFEST, LOCK, EARLIER)
                and "/" not in name
                and "\0" not in name
            )
    return names
