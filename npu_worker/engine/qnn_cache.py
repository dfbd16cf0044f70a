"""A QNN session compiled on this box, kept in the state folder's context cache: the next start loads
the compiled context (seconds) instead of specialising and compiling again (minutes). A context is
known by what made it (the model file's bytes, the target, the runtime versions, the specialiser);
its placement is recorded beside it, since a loaded context shows only its EPContext nodes.
`npu-worker prepare` compiles ahead of time instead (zipvoice/prepared.py).
"""

from __future__ import annotations

import glob
import hashlib
import json
import logging
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from npu_worker.engine import ran_out, specialize
from npu_worker.engine.file_stamp import content_stamp
from npu_worker.engine.providers import (
    FIXED_SHAPE_DISABLED_OPTIMIZERS,
    DeviceUnavailable,
    RuntimeConfig,
    SessionPlacement,
    fixed_shape_options,
    qnn_devices,
    runtime_versions,
)
from npu_worker.state_dir import private_folder

log = logging.getLogger(__name__)

# onnxruntime's words when it compiled a graph but could not write its EP context file (a full disk)
CACHE_NOT_WRITTEN = "Failed to write context cache file"


def placement_record_path(context: Path) -> Path:
    return context.with_name(context.name + ".placement.json")


def record_placement(context: Path, placed: SessionPlacement) -> None:
    """Keep the compiled graph's placement beside its context (a context shows only EPContext nodes)."""
    placement_record_path(context).write_text(json.dumps(placed.to_dict()), encoding="utf-8")


def recorded_placement(context: Path, session: Any, device: str) -> SessionPlacement:
    """The placement recorded when `context` was compiled, else what the session shows."""
    try:
        record = json.loads(placement_record_path(context).read_text(encoding="utf-8"))
        return SessionPlacement.from_dict(record | {"device": device})
    except (OSError, ValueError, KeyError, TypeError):
        return SessionPlacement.of(session, device)


# ------------------------------------------------------------------------------------------ QNN


def context_cache_path(config: RuntimeConfig, model_path: Path, fixed_dims: dict[str, int]) -> Path | None:
    """Where the compiled QNN context of this model + shape lives (None: no caching). The key holds
    what the context was made by too: after an upgrade of onnxruntime, its QNN plugin or the
    specialiser, the old context (its old placement) is not reused. The file is known by its bytes
    (`file_stamp`): not by size and mtime (another export copied with its times kept ran the old weights
    from the cache), nor by inode and ctime (a hard link from `prepare` or a `chmod` compiled again)."""
    if config.cache_dir is None:
        return None
    key = f"{content_stamp(model_path)}|{sorted(config.qnn_provider_options().items())}"
    key += f"|{sorted(runtime_versions().items())}|specialiser {specialize.VERSION}"
    digest = hashlib.sha256(f"{_cache_slot(model_path, fixed_dims)}|{key}".encode()).hexdigest()[:16]
    return config.cache_dir / f"{_cache_slot(model_path, fixed_dims)}-{digest}_ctx.onnx"


def _cache_slot(model_path: Path, fixed_dims: dict[str, int]) -> str:
    """The part of a cached context's name that one model file at one shape keeps across versions."""
    where = hashlib.sha256(f"{model_path.resolve()}|{sorted(fixed_dims.items())}".encode()).hexdigest()
    return f"{model_path.stem}-{where[:8]}"


def _drop_older_contexts(cached: Path, model_path: Path, fixed_dims: dict[str, int]) -> None:
    """Remove the contexts this model file at this shape had before (another model version, runtime,
    target): each is hundreds of MB at full size and nothing would load it again."""
    for path in cached.parent.glob(f"{glob.escape(_cache_slot(model_path, fixed_dims))}-*"):
        if not path.name.startswith(cached.name.removesuffix("ctx.onnx")):
            _remove_file(path)


def qnn_session(
    model_path: Path, config: RuntimeConfig, fixed_dims: dict[str, int]
) -> tuple[Any, SessionPlacement]:
    """`model_path` on the NPU, specialised to `fixed_dims`: the cached context where one loads, else
    compiled (and cached where there is a cache folder); DeviceUnavailable where QNN cannot."""
    devices = qnn_devices(config)

    def qnn_options() -> Any:
        options = fixed_shape_options(config, fixed_dims)
        options.add_provider_for_devices(devices, config.qnn_provider_options())
        return options

    options = qnn_options()
    disabled = list(FIXED_SHAPE_DISABLED_OPTIMIZERS) if fixed_dims else []
    cached = context_cache_path(config, model_path, fixed_dims)
    if cached is not None:  # the worker loads what is there: no one else may put a context in it
        private_folder(cached.parent)
    if cached is not None and cached.is_file():
        loaded = _load_context(cached, options, disabled)
        if loaded is not None:
            return loaded
    if cached is not None:
        specialize.remove_dead_scratch(cached.parent)
        options.add_session_config_entry("ep.context_enable", "1")
        options.add_session_config_entry("ep.context_file_path", str(cached))
        options.add_session_config_entry("ep.context_embed_mode", "0")
    try:
        with specialize.static_graph(model_path, fixed_dims, config.cache_dir) as graph:
            session = _compiled(graph, options, qnn_options, disabled, cached)
    except Exception as exc:
        said = ran_out.what_ran_out(exc, config.cache_dir) if config.cache_dir is not None else None
        raise DeviceUnavailable(f"QNN could not prepare {model_path.name}: {said or exc}") from exc
    placed = SessionPlacement.of(session, "qnn")
    if cached is not None and cached.is_file():
        _keep_context(cached, placed, model_path, fixed_dims)
    return session, placed


def _load_context(cached: Path, options: Any, disabled: list[str]) -> tuple[Any, SessionPlacement] | None:
    """The cached context's session and recorded placement; None (the file removed) for a stale or
    foreign one, compiled again by the caller."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(cached), sess_options=options, disabled_optimizers=disabled)
        return session, recorded_placement(cached, session, "qnn")
    except Exception as exc:  # stale or foreign cache: rebuild it below
        log.warning("ignoring QNN context cache %s: %s", cached, exc)
        _remove_file(cached)
        return None


def _compiled(
    graph: Path, options: Any, qnn_options: Callable[[], Any], disabled: list[str], cached: Path | None
) -> Any:
    """The specialised graph compiled by QNN, writing its context to `cached`; where only the context's
    write failed (the state disk full), compiled again uncached: the NPU all the same."""
    import onnxruntime as ort

    try:
        # no fallback: a compile that failed was retried on the CPU ("took no nodes")
        return ort.InferenceSession(
            str(graph), sess_options=options, disabled_optimizers=disabled, enable_fallback=0
        )
    except Exception as exc:
        said = None if cached is None else ran_out.what_ran_out(exc, cached.parent)
        if cached is None or (said is None and CACHE_NOT_WRITTEN not in str(exc)):
            raise
        # QNN compiled it; only the state disk (full?) refused the context: the NPU all the same
        log.warning("QNN context %s not cached (%s): compiling it again, uncached", cached, said or exc)
        _remove_context(cached)
        return ort.InferenceSession(
            str(graph), sess_options=qnn_options(), disabled_optimizers=disabled, enable_fallback=0
        )


def _keep_context(
    cached: Path, placed: SessionPlacement, model_path: Path, fixed_dims: dict[str, int]
) -> None:
    """A context just written is kept with its placement beside it (loaded, it would report its
    EPContext nodes only), and the model's older contexts are dropped."""
    try:
        record_placement(cached, placed)
    except OSError as exc:  # loaded without it, the context would report its EPContext nodes only
        log.warning("QNN context %s not cached: its placement could not be written: %s", cached, exc)
        _remove_context(cached)
    _drop_older_contexts(cached, model_path, fixed_dims)


def _remove_context(cached: Path) -> None:
    """A cached context and the binary it names (`<stem>_qnn.bin`), e.g. half written on a full disk."""
    for path in (cached, cached.with_name(f"{cached.stem}_qnn.bin"), placement_record_path(cached)):
        _remove_file(path)


def _remove_file(path: Path) -> None:
    """Unlink `path` where it is a file or a link (judged by lstat); a folder in its place is left as it
    is, with a warning: unlinking it raised IsADirectoryError out of the session's start."""
    try:
        if not stat.S_ISDIR(path.lstat().st_mode):
            path.unlink()
            return
    except FileNotFoundError:
        return
    except IsADirectoryError:  # (made a folder between the lstat and the unlink)
        pass
    log.warning("QNN context cache: %s is a folder, not a file the worker wrote: left in place", path)
