"""A prepared directory's compiled contexts opened as one QNN session per bucket (`serve`'s loading).

Apart from prepared.py, which holds the directory's format and the manifest's checks that need no
runtime: here onnxruntime and the NPU are met, and a context that does not load is explained (out of
NPU memory, a file cut short in its copy: context_files.py) rather than reported as a bare error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npu_worker.engine import providers
from npu_worker.engine.providers import RuntimeConfig, SessionPlacement
from npu_worker.engine.zipvoice import context_files
from npu_worker.engine.zipvoice.prepared import SHARE, PreparedModel, Progress
from npu_worker.protocol import ModelLoadError


def open_prepared_sessions(
    prepared: PreparedModel,
    decoder: Path,
    config: RuntimeConfig,
    progress: Progress | None = None,
    encoder: Path | None = None,
    vocoder: Path | None = None,
) -> tuple[dict[int, Any], dict[int, SessionPlacement]]:
    """One session per bucket from the compiled contexts (no specialising, no compiling), once QNN is
    usable here and the directory fits `decoder`, `encoder`, `vocoder`, the target and the runtime
    (`PreparedModel.check`)."""
    import onnxruntime as ort

    devices = providers.qnn_devices(config)
    prepared.check(decoder, config.qnn_provider_options(), encoder, vocoder)
    if progress is not None:  # only now: without QNN the log said this, then fell back to the CPU
        progress(f"loading {len(prepared.buckets)} compiled QNN contexts from {prepared.directory}")
    sessions, placements = {}, {}
    for size in prepared.buckets:
        options = providers.session_options(config)
        if prepared.manifest.get("weight_sharing"):  # (loading a shared binary without it crashes QNN)
            options.add_session_config_entry(SHARE, "1")
        options.add_provider_for_devices(devices, config.qnn_provider_options())
        try:
            sessions[size] = ort.InferenceSession(str(prepared.context(size)), sess_options=options)
        except Exception as exc:
            raise ModelLoadError(load_failure(prepared, size, sessions, exc)) from exc
        frames = sessions[size].get_inputs()[1].shape[1]
        if frames != size:  # a context under another bucket's name would fail every call it gets
            raise ModelLoadError(
                f"the compiled context {prepared.context(size)} takes {frames} frames, not {size}; "
                f"run `npu-worker prepare` again for {prepared.directory}"
            )
        placements[size] = prepared.placement(size)
    return sessions, placements


def load_failure(prepared: PreparedModel, size: int, loaded: dict[int, Any], exc: Exception) -> str:
    """What to do about a context that does not load: out of NPU memory is not fixed by preparing again."""
    if "MEM_ALLOC" in str(exc):
        held = sum(prepared.context_bytes(bucket) for bucket in loaded)
        return (
            f"the NPU has no memory for the compiled context {prepared.context(size)} after "
            f"{len(loaded)} others ({held / 1e6:.0f} MB of contexts) ({exc}); prepare fewer or smaller "
            "buckets (--buckets), 8-bit weights (--precision a16w8), or one weight-shared binary "
            "(--weight-sharing on, on the device)"
        )
    again = f"run `npu-worker prepare` again for {prepared.directory}"
    said = context_files.load_failure(prepared.context(size), exc)
    if said is not None:
        return f"{said}; copy the prepared folder again whole, or {again}"
    return f"cannot load the compiled context {prepared.context(size)} ({exc}); {again}"
