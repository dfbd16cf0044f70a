"""A prepared folder's compiled contexts (and the model files copied in) as files: each as large as
`prepare` wrote it, and a context that does not load said naming the file at fault and what to do.

onnxruntime names the EPContext model it was loading, not the file that failed: a context binary cut
short by a copy onto the device read as "cannot load the compiled context .../fm_decoder@383_ctx.onnx
([ONNXRuntimeError] : 10 : INVALID_GRAPH : Failed to load from EpContext model. Failed to get context
binary info.)", the binary beside it unnamed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_worker.engine.zipvoice.prepared import PreparedModel

# onnxruntime's words for a context model that is no ONNX file, and for a context binary QNN cannot read
_NOT_ONNX = ("INVALID_PROTOBUF", "Protobuf parsing failed")
_BINARY_UNREADABLE = ("Failed to get context binary info", "ep_cache_context does not exist")


def recorded_sizes(prepared: PreparedModel, kind: str = "compiled") -> dict[str, int]:
    """The files' sizes the manifest records (`sizes.compiled`: plain names in `qnn/`; `sizes.model_files`:
    in the folder itself); none for a manifest without them."""
    sizes = prepared.manifest.get("sizes")
    compiled = sizes.get(kind) if isinstance(sizes, dict) else None
    if not isinstance(compiled, dict):
        return {}
    return {
        name: size
        for name, size in compiled.items()
        if isinstance(name, str)
        and type(size) is int
        and name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
    }


def size_faults(prepared: PreparedModel) -> str | None:
    """What is wrong with the compiled files' sizes (a file missing, or of another size than prepare
    wrote: a copy cut short, another prepare's file), None when each is as recorded."""
    folder = prepared.context(prepared.buckets[0]).parent
    for name, size in sorted(recorded_sizes(prepared).items()):
        path = folder / name
        try:
            found = os.stat(path).st_size
        except FileNotFoundError:
            return f"{path} is missing (the prepare wrote it, {size} bytes)"
        except OSError as exc:
            return f"{path} cannot be read ({exc.strerror or exc})"
        if found != size:
            return (
                f"{path} is {found} bytes, the prepare wrote {size} (cut short by a copy that did not "
                "finish, or another prepare's file)"
            )
    return None


def copied_size_said(prepared: PreparedModel, path: Path) -> str:
    """ "; it is N bytes where the prepare copied M (...)" for a model file of the folder (`path`: the
    decoder, text encoder or vocoder served) whose hash did not match and whose size is not the one
    recorded, else "": a copy onto the device cut short read as another model's file."""
    recorded = recorded_sizes(prepared, "model_files").get(path.name)
    if recorded is None or path.parent != prepared.directory:
        return ""
    try:
        found = os.stat(path).st_size
    except OSError:
        return ""  # (the file's own error, where it is opened)
    if found == recorded:
        return ""
    return f"; it is {found} bytes where the prepare copied {recorded} (a copy cut short, or another file)"


def load_failure(context: Path, exc: Exception) -> str | None:
    """Which file of the compiled context `context` (its EPContext model) did not load and why, in
    words; None when onnxruntime's are not known here (they are then said as they are)."""
    words = str(exc)
    if any(known in words for known in _NOT_ONNX):
        return f"the compiled context {context} is no ONNX file onnxruntime can read (damaged or cut short)"
    if any(known in words for known in _BINARY_UNREADABLE):
        binary = context_binary(context)
        named = binary or f"{context} names"
        return f"QNN cannot read the context binary {named} (damaged, or not the one this prepare wrote)"
    return None


def context_binary(context: Path) -> Path | None:
    """The context binary an EPContext model names (its node's `ep_cache_context`, a path beside it);
    None when the model cannot be read for it."""
    try:
        import onnx

        model = onnx.load(str(context), load_external_data=False)
        for node in model.graph.node:
            if node.op_type != "EPContext":
                continue
            for attribute in node.attribute:
                name = attribute.s.decode("utf-8") if attribute.name == "ep_cache_context" else ""
                if name and "/" not in name and name not in (".", ".."):  # (only ever said, never opened)
                    return context.parent / name
    except Exception:  # (no `onnx` package, or a model it cannot parse: the caller says it without)
        return None
    return None
