"""Where a request may write or read: output_path and ref_wav must resolve under the allowed roots.

Resolution follows symlinks (os.path.realpath), so `..` tricks and links pointing outside are refused.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .protocol import OutputPathNotAllowed, RefWavNotAllowed


def is_under(path: str, roots: Sequence[str]) -> bool:
    for root in roots:
        try:
            if os.path.commonpath([path, root]) == root:
                return True
        except ValueError:
            continue
    return False


def resolve_output_path(path: str, roots: Sequence[str]) -> str:
    """The real absolute path to write, or OutputPathNotAllowed."""
    if "\x00" in path or not os.path.isabs(os.path.expanduser(path)):
        raise OutputPathNotAllowed(f"output_path must be an absolute path: {path!r}")
    real = os.path.realpath(os.path.expanduser(path))
    if not is_under(real, roots):
        raise OutputPathNotAllowed(
            f"{path} is outside the allowed roots ({', '.join(roots)}); "
            "start the worker with --output-roots (NPU_WORKER_OUTPUT_ROOTS) to allow another directory"
        )
    if os.path.isdir(real):
        raise OutputPathNotAllowed(f"{path} is a directory")
    return real


def resolve_ref_wav(path: str, roots: Sequence[str]) -> str:
    """The real path of an existing reference wav under the allowed roots, or RefWavNotAllowed."""
    if "\x00" in path:
        raise RefWavNotAllowed("ref_wav contains a NUL byte")
    real = os.path.realpath(os.path.expanduser(path))
    if not is_under(real, roots):
        raise RefWavNotAllowed(
            f"{path} is outside the allowed roots ({', '.join(roots)}); "
            "start the worker with --output-roots (NPU_WORKER_OUTPUT_ROOTS) to allow another directory"
        )
    if not os.path.isfile(real):
        raise RefWavNotAllowed(f"{path} does not exist or is not a file")
    return real
