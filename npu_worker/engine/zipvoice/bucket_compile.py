"""One bucket of `npu-worker prepare`: the decoder fixed to the bucket's shape (and quantised for a QDQ
precision), compiled by QNN into an EPContext model, and checked against the fp32 decoder on the CPU.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from npu_worker.engine import providers, ran_out, specialize
from npu_worker.engine.providers import RuntimeConfig, SessionPlacement
from npu_worker.engine.zipvoice import context_files, qdq
from npu_worker.engine.zipvoice.prepared import CONTEXT_DIR, SHARE, STOP_SHARE, context_name
from npu_worker.engine.zipvoice.qdq import Feed
from npu_worker.protocol import ModelLoadError


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


def cpu_reference(decoder: Path, config: RuntimeConfig) -> Any:
    """The fp32 decoder as exported, on the CPU with dynamic shapes: what accuracy is measured against."""
    import onnxruntime as ort

    return ort.InferenceSession(
        str(decoder), sess_options=providers.session_options(config), providers=["CPUExecutionProvider"]
    )


def compile_bucket(
    bucket: Bucket,
    contexts_dir: Path,
    config: RuntimeConfig,
    devices: list[Any],
    reference: Any,
    share: bool,
    last: bool,
    checks: list[Callable[[], None]] | None = None,
    shown_dir: Path | None = None,
) -> dict[str, Any]:
    """Specialise (and quantise) one bucket, compile it into its context; its record for the manifest.
    With `share`, its accuracy check goes into `checks`, to run once the shared binary is written.
    `shown_dir`: the folder a disk that ran out is named by (the prepare's --out)."""
    name = context_name(bucket.decoder, bucket.size)
    options = _context_options(bucket, contexts_dir / name, config, devices, share, last)
    notes: dict[str, Any] = {}
    started = time.monotonic()
    quantised = qdq.is_quantised(bucket.precision)
    compiling = f"QNN could not compile {bucket.decoder.name} for {bucket.size} frames"
    try:
        with _bucket_graph(bucket, contexts_dir, notes) as graph:
            ready = time.monotonic()
            boundary = qdq.boundary_names(graph) if quantised else set()
            session = _compiled(graph, options, compiling, (contexts_dir, shown_dir))
            compiled = time.monotonic()
            # the same QDQ graph on the CPU: how much of the distance is quantisation, how much HTP
            on_cpu = _run_on_cpu(graph, bucket.held_out) if quantised and reference is not None else None
    except OSError as exc:  # no room for the specialised (or quantised) graph
        said = ran_out.what_ran_out(exc, contexts_dir, shown_dir)
        if said is None:
            raise
        raise ModelLoadError(f"{compiling}: {said}") from exc
    placed = SessionPlacement.of(session, "qnn", qdq.boundary_on_cpu(session, boundary))
    del session
    _check_compiled(bucket, placed, contexts_dir / name)
    record = _record(bucket, name, placed, notes, (started, ready, compiled))
    if reference is not None and bucket.held_out:
        context = contexts_dir / name
        check = partial(
            _check_into, record, context, config, devices, reference, bucket.held_out, on_cpu, share
        )
        if share and checks is not None:
            checks.append(check)
        else:
            check()
    return record


def _compiled(graph: Path, options: Any, compiling: str, folders: tuple[Path, Path | None]) -> Any:
    """QNN's session of the bucket's graph, its context written as it compiles; ModelLoadError where it
    cannot (`compiling`: what failed; a disk that ran out named by `folders`: the contexts', shown as)."""
    import onnxruntime as ort

    try:
        return ort.InferenceSession(
            str(graph),
            sess_options=options,
            disabled_optimizers=list(providers.FIXED_SHAPE_DISABLED_OPTIMIZERS),
            enable_fallback=0,  # a failed compile was retried on the CPU: "QNN runs none"
        )
    except Exception as exc:
        said = ran_out.what_ran_out(exc, *folders)
        raise ModelLoadError(f"{compiling}: {said or exc}") from exc


def _check_into(
    record: dict[str, Any],
    context: Path,
    config: RuntimeConfig,
    devices: list[Any],
    reference: Any,
    feeds: list[Feed],
    graph_on_cpu: list[Any] | None,
    shared: bool,
) -> None:
    """A compiled bucket's accuracy against fp32 (`_check_bucket`'s) kept in its manifest record: run
    at once, or, with a shared binary, once that is written."""
    record["accuracy"] = _check_bucket(context, config, devices, reference, feeds, graph_on_cpu, shared)


def _context_options(
    bucket: Bucket, context: Path, config: RuntimeConfig, devices: list[Any], share: bool, last: bool
) -> Any:
    """The session options that compile `bucket` on QNN's `devices` into the EPContext model `context`
    (its binary beside it), sharing weights with the other buckets' (`share`) up to the `last`."""
    options = providers.fixed_shape_options(config, bucket.dims)
    options.add_provider_for_devices(devices, config.qnn_provider_options())
    options.add_session_config_entry("ep.context_enable", "1")
    options.add_session_config_entry("ep.context_file_path", str(context))
    options.add_session_config_entry("ep.context_embed_mode", "0")
    if share:
        options.add_session_config_entry(SHARE, "1")
        if last:
            options.add_session_config_entry(STOP_SHARE, "1")
    return options


def _record(
    bucket: Bucket,
    name: str,
    placed: SessionPlacement,
    notes: dict[str, Any],
    moments: tuple[float, float, float],
) -> dict[str, Any]:
    """A compiled bucket's record for the manifest. `moments`: when its work started, when its graph was
    ready (specialised, and quantised), when it was compiled."""
    started, ready, compiled = moments
    record: dict[str, Any] = {
        "file": f"{CONTEXT_DIR}/{name}",
        "placement": placed.to_dict(),
        "specialise_seconds": round(notes.get("specialised", ready) - started, 1),
        "compile_seconds": round(compiled - ready, 1),
    }
    if qdq.is_quantised(bucket.precision):
        record["quantise_seconds"] = round(ready - notes["specialised"], 1)
        record["calibration_calls"] = len(bucket.feeds)
        record["kept_in_float"] = notes["kept_in_float"]  # embeddings, Swoosh softplus (qdq.py)
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
    except Exception as exc:  # (the file QNN wrote a moment ago: a disk that damaged it, or QNN's own fault)
        said = (
            context_files.load_failure(context, exc) or f"cannot load the compiled context {context} ({exc})"
        )
        raise ModelLoadError(
            f"{said}, checking it against the fp32 decoder; run prepare again (--check-calls 0 prepares "
            "without this check)"
        ) from exc
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
