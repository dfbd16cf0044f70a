"""`npu-worker prepare`'s claim on its --out folder: checked, made and locked before any work that the
folder's loss would waste (a quantised prepare's calibration), held to the prepare's end, and the folder
left as it was found by a prepare that fails before it writes there. The checks, the lock and the copy
themselves are prepare_out.py's; what is written in the folder is prepare.py's.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_worker.engine import providers
from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice.prepare_out import cannot_write, check_out_dir, out_dir_lock
from npu_worker.engine.zipvoice.prepared import LOCK
from npu_worker.protocol import ModelLoadError


@dataclass
class OutClaim:
    """An --out folder checked, made and locked for one prepare (`claim_out`), and QNN's devices there.
    `writing`: `prepare()` has begun to write in it (what a failure after leaves, `serve` refuses as
    unfinished: `prepared.unfinished`); before, a failure leaves the folder as it was found."""

    folder: Path
    devices: list[Any]
    writing: bool = False


@contextlib.contextmanager
def claim_out(out: Path, config: RuntimeConfig) -> Iterator[OutClaim]:
    """`out` checked, made and its lock held while the block runs: `prepare()`'s whole run, and for a
    quantised prepare its calibration too (the lock was only probed before calibrating, so two
    prepares into one folder both calibrated for minutes, and one was refused only at its end).
    QNN is checked first: missing, it must not cost an earlier prepare's work, or minutes of calibration.
    A prepare that fails (or is stopped) before it writes in `out` (in a quantised prepare's calibration)
    leaves it as it was found."""
    check_out_dir(out)
    devices = providers.qnn_devices(config)
    try:
        made = _made(out)
    except OSError as exc:  # (a parent this user may not write in, a read-only filesystem)
        raise ModelLoadError(cannot_write(exc, f"make the --out folder {out}", out)) from exc
    check_out_dir(out)  # again: someone may have made it first, in a shared folder
    lock_found = os.path.lexists(out / LOCK)
    with out_dir_lock(out):
        claim = OutClaim(out, devices)
        try:
            yield claim
        except BaseException:
            if not claim.writing:
                _left_as_found(out, made, lock_found)
            raise


def _made(out: Path) -> bool:
    """`mkdir -p out`, and whether this call made `out` (what is there already: `exist_ok`'s OSError
    unless it is a folder, as for a file or a link to nothing)."""
    try:
        out.mkdir(parents=True)
    except FileExistsError:
        out.mkdir(parents=True, exist_ok=True)
        return False
    return True


def _left_as_found(out: Path, made: bool, lock_found: bool) -> None:
    """`out` as it was before a claim that failed before writing, where nothing but the lock file it made
    is in it (still held): a quantised prepare refused in its calibration (texts that are no JSON) left a
    new --out holding only `.prepare.lock`, where the same refusal had left none before the lock was
    taken ahead of the calibration."""
    with contextlib.suppress(OSError):  # (what cannot be removed stays: a later prepare goes past it)
        if lock_found or os.listdir(out) != [LOCK]:
            return
        (out / LOCK).unlink()
        if made:
            out.rmdir()
