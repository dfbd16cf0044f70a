"""Writing output files: a file appears complete at its path or not at all.

`write_output` is the one function every wav the worker produces goes through (the engine thread calls
it); `write_atomic` is the mechanism (temp file in the target directory, then `os.replace`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PART_SUFFIX = ".part"


def write_output(path: str | Path, data: bytes) -> None:
    """Write a produced file atomically, first removing temp files a crash left for the same target.

    No fsync: a killed worker never leaves a half file (the rename is atomic and the data is in the
    page cache), and the job log that records the file is flushed, not synced, either; syncing each
    wav would cost the batch about a millisecond per section for a power-loss guarantee the log
    does not give.
    """
    remove_stale_parts(path)
    write_atomic(path, data, durable=False)


def write_atomic(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    """Write via a temp file in the target directory + os.replace; parent dirs are created.

    `durable`: fsync the data before the rename (job requests, which recovery depends on).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=PART_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if durable:
                os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def remove_stale_parts(path: str | Path) -> int:
    """Delete `.<name>.*.part` temp files of `path` (plain files only); how many went.

    Only the engine thread writes a given target, so a temp file found before a write is a leftover
    of a process that died mid-write (`kill -9`), never a write in progress.
    """
    target = Path(path)
    prefix = f".{target.name}."
    removed = 0
    try:
        entries = list(os.scandir(target.parent))
    except (FileNotFoundError, NotADirectoryError):
        return 0
    for entry in entries:
        if entry.name.startswith(prefix) and entry.name.endswith(PART_SUFFIX):
            if entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                    removed += 1
                except FileNotFoundError:
                    pass
    return removed


def remove_all_parts(directory: str | Path) -> int:
    """Delete every `.*.part` temp file in a directory the worker owns (cache, job directories)."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return 0
    for entry in entries:
        if (
            entry.name.startswith(".")
            and entry.name.endswith(PART_SUFFIX)
            and entry.is_file(follow_symlinks=False)
        ):
            try:
                os.unlink(entry.path)
                removed += 1
            except FileNotFoundError:
                pass
    return removed
