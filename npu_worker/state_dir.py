"""The worker's state dir made, or taken as it is, only where no one else can use it: it holds job
texts, cached audio and the records the worker trusts (split from `paths.py`, which says where callers
may write); and the folders of its own in it made so (`private_folder`, from `files.py`)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from .other_writers import replaceable_by_others, writable_by_others


def make_private_dir(path: Path) -> None:
    """Create the state dir readable by this user only (job texts and cached audio are private).

    An existing one must be a directory of this process's user that no one else can write in: a state
    dir someone else made first (in a shared place like /tmp, say) would let them plant job records and
    cached audio the worker then serves, or read every caller's texts."""
    if not path.exists():  # each missing folder 0700, not the umask's (002 made ~/.local group-writable)
        for folder in reversed([p for p in (path, *path.parents) if not p.exists()]):
            folder.mkdir(mode=0o700, exist_ok=True)
    elif not path.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    unsafe = replaceable_by_others(path)
    if unsafe is not None:
        raise PermissionError(errno.EPERM, f"{unsafe}; use a directory only this user can change", str(path))
    info = path.stat()
    if info.st_uid != os.geteuid():
        raise PermissionError(
            errno.EPERM,
            f"it belongs to another user (uid {info.st_uid}); use one of the worker's own",
            str(path),
        )
    if writable_by_others(info, os.path.realpath(path)):
        raise PermissionError(
            errno.EPERM,
            f"others can write in it (mode {info.st_mode & 0o777:o}); `chmod go-w` it or use a private one",
            str(path),
        )
    try:  # one the worker cannot write in (read-only, full) would refuse every batch while /ready says ok
        with tempfile.TemporaryFile(dir=path) as probe:  # a byte too: a full disk still makes empty files
            probe.write(b"\0")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        raise PermissionError(
            exc.errno, f"the worker cannot write in it ({exc.strerror})", str(path)
        ) from None


def private_folder(path: str | Path) -> None:
    """Create a folder of the worker's own in its state dir that no one else may write in, whatever
    the umask (a service's `UMask=0007` made them group-writable: the group could plant cache entries);
    an existing one of ours that others could write in loses that right. By `os`'s functions, as
    pathlib's `mkdir(parents=True, exist_ok=True)` does it: pathlib's were ≈ 14 Python calls a default
    output a batch section writes (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 62)."""
    folder = os.fspath(path)
    try:
        os.mkdir(folder, 0o750)
    except FileNotFoundError:
        os.makedirs(folder, 0o750, exist_ok=True)  # its parents first
    except OSError:
        if not os.path.isdir(folder):  # (there already: a folder, or a link to one, is taken)
            raise
    info = os.stat(folder)
    if info.st_uid == os.geteuid() and info.st_mode & 0o022:
        os.chmod(folder, stat.S_IMODE(info.st_mode) & ~0o022)
