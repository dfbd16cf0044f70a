"""`npu-worker prepare`, the compiling side: per bucket, the static (and, for a QDQ precision, quantised)
decoder graph compiled by QNN into an EPContext model, checked against the fp32 decoder on the CPU, and
the manifest written last (only a complete directory has one). The format, the manifest's checks and the
loading side are prepared.py's.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npu_worker.engine import providers, qnn_targets, specialize
from npu_worker.engine.providers import RuntimeConfig, SessionPlacement
from npu_worker.engine.zipvoice import qdq
from npu_worker.engine.zipvoice.prepared import (
    CONTEXT_DIR,
    FORMAT,
    LOCK,
    MANIFEST,
    PRECISIONS,
    SHARE,
    STOP_SHARE,
    Progress,
    context_name,
    file_hash,
    runtime_versions,
    target_options,
)
from npu_worker.engine.zipvoice.qdq import Feed
from npu_worker.files import shared_with_others, write_atomic
from npu_worker.leftovers import remove_all_parts
from npu_worker.protocol import ModelLoadError

if TYPE_CHECKING:
    from npu_worker.engine.zipvoice.calibration import Recording


def _copy_model_files(source: Path, target: Path, extra: Sequence[Path] = ()) -> dict[str, int]:
    """The source directory's files (not its folders), and `extra` files from elsewhere (a vocoder
    beside the model dir), into `target`: hard-linked where possible, each under a temp name first and
    renamed over the destination, so a link found there is replaced, never written through. Only a
    file of this user's that no one else may write is linked: a link to another's (root may make one)
    is still theirs to change, in the prepared folder too."""
    sizes = {}
    files = [
        path for path in sorted(source.iterdir()) if path.is_file() and path.name not in (MANIFEST, LOCK)
    ]
    for path in [*files, *extra]:
        temp = target / f".{path.name}.{secrets.token_hex(6)}.part"
        try:
            info = path.stat()
            if not (info.st_uid == os.geteuid() and not info.st_mode & 0o022 and _linked(path, temp)):
                with open(path, "rb") as reader, open(temp, "xb") as writer:  # "x": O_EXCL, never a link
                    shutil.copyfileobj(reader, writer)
            os.replace(temp, target / path.name)
        except OSError as exc:  # a full disk: the part copied must not stay and fill it
            temp.unlink(missing_ok=True)
            raise ModelLoadError(f"cannot copy {path} into {target}: {exc.strerror or exc}") from exc
        sizes[path.name] = path.stat().st_size
    return sizes


def _linked(path: Path, link: Path) -> bool:
    try:
        os.link(path, link)
    except OSError:  # another filesystem, or links refused
        return False
    return True


def check_out_dir(out: Path) -> None:
    """Refuse an output folder another user could change (the worker would load what they put there)
    or one holding other things (prepare replaces its `qnn/` folder and files by name)."""
    shared = shared_with_others(out)
    if shared is not None:
        raise ModelLoadError(f"--out {out}: {shared}; use a folder only this user can change")
    if out.exists() and not out.is_dir():
        raise ModelLoadError(f"--out {out} is not a directory")
    if (
        out.is_dir()
        and any(path.name != LOCK for path in out.iterdir())
        and not ((out / MANIFEST).exists() or (out / CONTEXT_DIR).is_dir())
    ):
        raise ModelLoadError(
            f"--out {out} holds other files; give an empty or new folder, or an earlier prepare's"
        )


@contextlib.contextmanager
def out_dir_lock(out: Path) -> Iterator[None]:
    """Hold `out`'s lock file for the whole prepare: a second prepare into the same folder would wipe
    the first one's `qnn/` half-way; it is refused instead (no link followed, no waiting)."""
    try:
        descriptor = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:  # a link in its place: ELOOP
        raise ModelLoadError(f"--out {out}: cannot open its {LOCK}: {exc}") from exc
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ModelLoadError(
                f"--out {out}: another prepare is writing this folder (it holds {LOCK}); "
                "wait for it to end or give another --out"
            ) from None
        yield
    finally:
        os.close(descriptor)


def check_plan(buckets: Sequence[int], weight_sharing: bool, check_calls: int) -> None:
    """Refuse, before any calibration, a prepare whose held-out check cannot run here: the x86 HTP
    simulator cannot load a weight-shared binary of several buckets (the process crashes: SIGSEGV)."""
    if weight_sharing and check_calls and len(set(buckets)) > 1 and qnn_targets.htp_is_simulated():
        raise ModelLoadError(
            "--weight-sharing on: the x86 HTP simulator cannot load a weight-shared binary of several "
            "buckets (it crashes the process), so the held-out calls cannot check it here; pass "
            "--check-calls 0, --weight-sharing off or one bucket"
        )


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
) -> dict[str, Any]:
    """Compile `decoder` for every bucket into `out` (a copy of the model directory); the manifest.

    A quantised `precision` (qdq.QUANTISED) needs `calibration`: its feeds per bucket, of which the last
    `check_calls` are held out to measure each compiled bucket against the fp32 decoder on the CPU."""
    from npu_worker.engine.zipvoice.runtime import bucket_dims

    if precision not in PRECISIONS:
        raise ModelLoadError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    if qdq.is_quantised(precision) and calibration is None:
        raise ModelLoadError(f"--precision {precision} needs calibration data")
    check_plan(buckets, weight_sharing, check_calls if calibration is not None else 0)
    shapes = bucket_dims(decoder, tuple(buckets))  # before anything in `out` changes: a bad bucket,
    check_out_dir(out)
    devices = providers.qnn_devices(config)  # or QNN missing, must not cost an earlier prepare's work
    out.mkdir(parents=True, exist_ok=True)
    check_out_dir(out)  # again: someone may have made it first, in a shared folder
    with out_dir_lock(out):  # held to the end: a second prepare here is refused
        (out / MANIFEST).unlink(missing_ok=True)  # a half-prepared directory must not look prepared
        remove_all_parts(out)  # the temp copies of a prepare killed while copying (a model's size each)
        contexts_dir = out / CONTEXT_DIR
        shutil.rmtree(contexts_dir, ignore_errors=True)
        contexts_dir.mkdir()
        outside = [path for path in sources if path.parent.resolve() != decoder.parent.resolve()]
        sizes = _copy_model_files(decoder.parent, out, extra=outside)
        buckets = tuple(shapes)
        reference = _cpu_reference(decoder, config) if calibration is not None and check_calls else None
        contexts: dict[str, Any] = {}
        checks: list[Callable[[], None]] = []  # with weight sharing: once the shared binary is written
        started = time.monotonic()
        for index, (size, dims) in enumerate(shapes.items()):
            last = index == len(buckets) - 1
            feeds = calibration.feeds[size] if calibration is not None else []
            held_out = (
                feeds[len(feeds) - check_calls :]
                if reference is not None and len(feeds) > check_calls
                else []
            )
            bucket = Bucket(decoder, size, dims, precision, feeds[: len(feeds) - len(held_out)], held_out)
            contexts[str(size)] = _compile_bucket(
                bucket,
                contexts_dir,
                config,
                devices,
                reference,
                share=weight_sharing,
                last=last,
                checks=checks,
            )
            done = time.monotonic() - started
            left = done / (index + 1) * (len(buckets) - index - 1)
            record = contexts[str(size)]
            checked = record.get("accuracy")
            progress(
                f"bucket {size} ({index + 1}/{len(buckets)}): {record['placement']['on_device']} of "
                f"{record['placement']['nodes']} nodes on QNN, specialised in {record['specialise_seconds']} s, "
                + (f"quantised in {record['quantise_seconds']} s, " if "quantise_seconds" in record else "")
                + f"compiled in {record['compile_seconds']} s"
                + (f", {checked['max_relative_l2']:.2e} from fp32 on the CPU" if checked else "")
                + f"; about {left:.0f} s left"
            )
        for check in checks:  # the binary every bucket's context names is written with the last one
            check()
        for name, checked_late in contexts.items() if checks else ():
            if "accuracy" in checked_late:
                distance = checked_late["accuracy"]["max_relative_l2"]
                progress(f"bucket {name}: {distance:.2e} from fp32 on the CPU")
        compiled = {path.name: path.stat().st_size for path in sorted(contexts_dir.iterdir())}
        files, runs_as = PRECISIONS[precision]
        manifest = {
            "format": FORMAT,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "decoder": decoder.name,
            "precision": precision,
            "files": files,
            "runs_as": runs_as,
            "buckets": list(buckets),
            "target": {
                "qnn_soc": config.qnn_soc,
                "provider_options": target_options(config.qnn_provider_options()),
            },
            "runtime": runtime_versions(),
            "specialiser": specialize.VERSION,
            "weight_sharing": weight_sharing,
            "source": {path.name: file_hash(path) for path in sources},
            "contexts": contexts,
            "sizes": {"model_files": sizes, "compiled": compiled},
            "seconds": round(time.monotonic() - started, 1),
        }
        if calibration is not None:
            manifest["calibration"] = (
                (calibration_info or {}) | calibration.summary() | {"held_out": check_calls}
            )
        # Last: only a complete directory has a manifest (a temp file of its own, renamed over any link).
        # 0644: `serve` runs as the service's user, `prepare` often as root (a 0600 manifest: ModelLoadError).
        try:
            write_atomic(out / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"), mode=0o644)
        except OSError as exc:
            raise ModelLoadError(f"cannot write {out / MANIFEST}: {exc.strerror or exc}") from exc
        return manifest


@dataclass(frozen=True)
class Bucket:
    """One bucket to compile: the decoder fixed to `dims`, quantised on `feeds` if `precision` says so,
    checked on `held_out` feeds."""

    decoder: Path
    size: int
    dims: dict[str, int]
    precision: str
    feeds: list[Feed]
    held_out: list[Feed]


def _cpu_reference(decoder: Path, config: RuntimeConfig) -> Any:
    """The fp32 decoder as exported, on the CPU with dynamic shapes: what accuracy is measured against."""
    import onnxruntime as ort

    return ort.InferenceSession(
        str(decoder), sess_options=providers.session_options(config), providers=["CPUExecutionProvider"]
    )


def _compile_bucket(
    bucket: Bucket,
    contexts_dir: Path,
    config: RuntimeConfig,
    devices: list[Any],
    reference: Any,
    share: bool,
    last: bool,
    checks: list[Callable[[], None]] | None = None,
) -> dict[str, Any]:
    """Specialise (and quantise) one bucket, compile it into its context; its record for the manifest.
    With `share`, its accuracy check goes into `checks`, to run once the shared binary is written."""
    import onnxruntime as ort

    name = context_name(bucket.decoder, bucket.size)
    options = providers.fixed_shape_options(config, bucket.dims)
    options.add_provider_for_devices(devices, config.qnn_provider_options())
    options.add_session_config_entry("ep.context_enable", "1")
    options.add_session_config_entry("ep.context_file_path", str(contexts_dir / name))
    options.add_session_config_entry("ep.context_embed_mode", "0")
    if share:
        options.add_session_config_entry(SHARE, "1")
        if last:
            options.add_session_config_entry(STOP_SHARE, "1")
    notes: dict[str, Any] = {}
    started = time.monotonic()
    quantised = qdq.is_quantised(bucket.precision)
    with _bucket_graph(bucket, contexts_dir, notes) as graph:
        ready = time.monotonic()
        boundary = qdq.boundary_names(graph) if quantised else set()
        try:
            session = ort.InferenceSession(
                str(graph),
                sess_options=options,
                disabled_optimizers=list(providers.FIXED_SHAPE_DISABLED_OPTIMIZERS),
            )
        except Exception as exc:
            raise ModelLoadError(
                f"QNN could not compile {bucket.decoder.name} for {bucket.size} frames: {exc}"
            ) from exc
        compiled = time.monotonic()
        # the same QDQ graph on the CPU: how much of the distance is quantisation, how much HTP
        on_cpu = _run_on_cpu(graph, bucket.held_out) if quantised and reference is not None else None
    placed = SessionPlacement.of(session, "qnn", qdq.boundary_on_cpu(session, boundary))
    del session
    _check_compiled(bucket, placed, contexts_dir / name)
    record: dict[str, Any] = {
        "file": f"{CONTEXT_DIR}/{name}",
        "placement": placed.to_dict(),
        "specialise_seconds": round(notes.get("specialised", ready) - started, 1),
        "compile_seconds": round(compiled - ready, 1),
    }
    if quantised:
        record["quantise_seconds"] = round(ready - notes["specialised"], 1)
        record["calibration_calls"] = len(bucket.feeds)
        record["kept_in_float"] = notes["kept_in_float"]  # embeddings, Swoosh softplus (qdq.py)
    if reference is not None and bucket.held_out:
        context, held_out = contexts_dir / name, bucket.held_out

        def check() -> None:
            record["accuracy"] = _check_bucket(context, config, devices, reference, held_out, on_cpu, share)

        if share and checks is not None:
            checks.append(check)
        else:
            check()
    return record


def _check_compiled(bucket: Bucket, placed: SessionPlacement, context: Path) -> None:
    """ModelLoadError unless QNN compiled something: for a graph it takes no node of, onnxruntime writes
    no context, and the manifest named one that did not exist (`serve` then said to prepare again)."""
    if placed.on_device == 0:
        raise ModelLoadError(
            f"QNN runs none of the {placed.nodes} nodes of {bucket.decoder.name} at {bucket.size} frames "
            "(HTP has no kernel for its operators, or QNN does not know the --qnn-soc target): nothing "
            "was compiled"
        )
    if not context.is_file():
        raise ModelLoadError(
            f"QNN wrote no compiled context for {bucket.decoder.name} at {bucket.size} frames"
        )


def _run_on_cpu(graph: Path, feeds: list[Feed]) -> list[Any]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    return [session.run(None, feed)[0] for feed in feeds]


@contextlib.contextmanager
def _bucket_graph(bucket: Bucket, work_dir: Path, notes: dict[str, Any]) -> Iterator[Path]:
    """The static graph QNN compiles for `bucket`: specialised, and quantised for a QDQ precision."""
    if qdq.is_quantised(bucket.precision):
        with qdq.qdq_graph(
            bucket.decoder, bucket.dims, bucket.precision, bucket.feeds, work_dir, notes
        ) as graph:
            yield graph
    else:
        with specialize.static_graph(bucket.decoder, bucket.dims, work_dir) as graph:
            notes["specialised"] = time.monotonic()
            yield graph


def _check_bucket(
    context: Path,
    config: RuntimeConfig,
    devices: list[Any],
    reference: Any,
    feeds: list[Feed],
    graph_on_cpu: list[Any] | None = None,
    shared: bool = False,
) -> dict[str, Any]:
    """Relative L2 distance of the compiled bucket's velocity from the fp32 CPU decoder's, per held-out
    call (and of the uncompiled QDQ graph run by the CPU, `graph_on_cpu`, when given)."""
    import onnxruntime as ort

    options = providers.session_options(config)
    if shared:  # (loading a shared binary without it crashes QNN)
        options.add_session_config_entry(SHARE, "1")
    options.add_provider_for_devices(devices, config.qnn_provider_options())
    try:
        session = ort.InferenceSession(str(context), sess_options=options)
    except Exception as exc:
        raise ModelLoadError(f"cannot load the compiled context {context} to check it: {exc}") from exc
    distances, seconds, quantisation = [], [], []
    for index, feed in enumerate(feeds):
        started = time.monotonic()
        got = session.run(None, feed)[0]
        seconds.append(time.monotonic() - started)
        expected = reference.run(None, feed)[0]
        distances.append(qdq.relative_l2(expected, got))
        if graph_on_cpu is not None:
            quantisation.append(qdq.relative_l2(expected, graph_on_cpu[index]))
    del session
    record = {
        "calls": len(feeds),
        "relative_l2": [round(value, 6) for value in distances],
        "max_relative_l2": round(max(distances), 6),
        "call_seconds": [round(value, 2) for value in seconds],
        "against": "fp32 decoder on the CPU, same inputs (held-out calibration calls)",
    }
    if quantisation:
        record["same_graph_on_cpu_relative_l2"] = [round(value, 6) for value in quantisation]
    return record
