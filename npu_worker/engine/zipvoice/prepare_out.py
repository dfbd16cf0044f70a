"""`npu-worker prepare`'s output folder: refused where another user could change it or it holds other
things, locked for the whole prepare, and the model's files copied into it (reflinked where the disk can).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pwd
import resource
import secrets
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from npu_worker.engine import ran_out
from npu_worker.engine.zipvoice.prepared import CONTEXT_DIR, EARLIER, LOCK, MANIFEST, STAGING
from npu_worker.other_writers import shared_with_others
from npu_worker.protocol import ModelLoadError


def _copy_model_files(
    source: Path, target: Path, extra: Mapping[str, Path] | None = None, shown: Path | None = None
) -> dict[str, int]:
    """The source directory's files (not its folders), then `extra` files from elsewhere under the
    names given (a vocoder beside the model dir or named by --vocoder), into `target`: each copied
    (`_clone_or_copy`) under a temp name first and renamed over the destination, so a link found there
    is replaced, never written through. Never hard-linked: a link shares the source's inode, so a
    re-export of the model in place (an exporter opens the file it replaces with O_TRUNC) changed the
    prepared folder too, which `serve` then refused ("run prepare again"); a link to another user's
    file (root may make one) was still theirs to change."""
    sizes = {}
    files = [
        path
        for path in sorted(source.iterdir())
        if path.is_file() and path.name not in (MANIFEST, LOCK, EARLIER)
    ]
    for name, path in [*((path.name, path) for path in files), *(extra or {}).items()]:
        temp = target / f".{name}.{secrets.token_hex(6)}.part"
        try:
            with open(path, "rb") as reader:
                info = os.fstat(reader.fileno())  # the file copied, not what its name holds later
                with open(temp, "xb", opener=_no_more_open(info)) as writer:  # "x": O_EXCL, never a link
                    _clone_or_copy(reader, writer, info.st_size)
                    copied = os.fstat(writer.fileno()).st_size
            if copied != info.st_size:
                raise _Changed(f"{path} gave {copied} bytes where it said {info.st_size}")
            os.replace(temp, target / name)
        except OSError as exc:  # a full disk: the part copied must not stay and fill it
            said = ran_out.what_ran_out(exc, target, shown)  # (before the part goes: "full" is true now)
            temp.unlink(missing_ok=True)
            if said is None and exc.filename == str(path):  # (reading the source: not the --out's fault)
                said = exc.strerror or str(exc)
            raise ModelLoadError(
                f"cannot copy {path} into {shown or target}: {said or why_not_written(exc, shown or target)}"
            ) from exc
        except _Changed as exc:
            temp.unlink(missing_ok=True)
            raise ModelLoadError(
                f"{exc} (written while it was copied?): run prepare again once it is written"
            ) from None
        sizes[name] = info.st_size  # (the size after the copy was another file's where the name was replaced)
    return sizes


def cannot_write(exc: OSError, what: str, out: Path, folder: Path | None = None) -> str:
    """A prepare's failed write said as `cannot <what>: <why, in words a user acts on, and what to do>`
    (`folder`: where it wrote, the staging inside `out`, for a disk that ran out): a read-only --out
    was "[Errno 13] Permission denied: '/srv/models/out'", naming neither the flag nor a fix."""
    said = ran_out.what_ran_out(exc, folder or out, out) or why_not_written(exc, out)
    return f"cannot {what}: {said}"


def why_not_written(exc: OSError, out: Path) -> str:
    """Why a write into the --out folder `out` failed, for one that is no full disk (`ran_out`): a
    folder this user may not write in, a read-only filesystem; else the system's words."""
    number = ran_out.error_number(exc)
    place = Path(exc.filename).parent if isinstance(exc.filename, str) else out
    if number in (errno.EACCES, errno.EPERM):
        return (
            f"{_user()} may not write in {place} ({os.strerror(number)}): give an --out this user may "
            "write in, or run prepare as a user who may"
        )
    if number == errno.EFBIG:  # (RLIMIT_FSIZE, or a filesystem's own bound: FAT32's 4 GB)
        return (
            f"File too large for this process (`ulimit -f`: {_file_size_limit()}) or the filesystem of {out}: "
            "raise the limit or give an --out on another filesystem"
        )
    if number == errno.EROFS:
        return f"the filesystem of {out} is read-only: give an --out on a filesystem that can be written"
    return exc.strerror or str(exc)


def _file_size_limit() -> str:
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return "unlimited" if limit == resource.RLIM_INFINITY else f"{limit} bytes"


def _user() -> str:
    try:
        return f"user {pwd.getpwuid(os.geteuid()).pw_name}"
    except KeyError:  # (a uid with no name: a container's)
        return f"user {os.geteuid()}"


def _no_more_open(source: os.stat_result) -> Callable[[str, int], int]:
    """An opener that makes the copy with at most the source's permission bits: root preparing a folder
    a local user owns read a link there to a file only root may read (`key -> /root/.ssh/id_rsa`) and
    wrote it 0644, for anyone to read in the prepared folder."""
    return lambda name, flags: os.open(name, flags, stat.S_IMODE(source.st_mode) & 0o666)


FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int), a copy-on-write clone of a whole file
KERNEL_COPY_REFUSED = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF)


class _Changed(Exception):
    """A model file whose size changed while it was copied (written in place meanwhile)."""


def _clone_or_copy(reader: BinaryIO, writer: BinaryIO, size: int) -> None:
    """`reader`'s bytes (`size` of them, its size when opened) into the empty `writer`: reflinked where
    the filesystem shares extents copy-on-write (btrfs, XFS, bcachefs: instant, no space until one side
    changes), else copied in the kernel (`copy_file_range`), the rest read and written: where it is
    refused (EXDEV between filesystems, ENOSYS, EOPNOTSUPP) or answers 0 before `size` (some
    filesystems' "not here"; a first 0 was taken as the end, an empty copy). A full disk is an OSError."""
    with contextlib.suppress(OSError):
        fcntl.ioctl(writer.fileno(), FICLONE, reader.fileno())
        return
    copied = 0
    try:
        while copied < size and (step := os.copy_file_range(reader.fileno(), writer.fileno(), 1 << 30)):
            copied += step
    except OSError as exc:
        if exc.errno not in KERNEL_COPY_REFUSED:
            raise
    _copy_rest(reader.fileno(), writer.fileno())


def _copy_rest(reader: int, writer: int) -> None:
    """From both descriptors' offsets (where `copy_file_range` left them) to the reader's end."""
    while chunk := os.read(reader, 1 << 20):
        view = memoryview(chunk)
        while view:
            view = view[os.write(writer, view) :]


def check_out_dir(out: Path) -> None:
    """Refuse an output folder another user could change (the worker would load what they put there)
    or one holding other things (prepare replaces its `qnn/` folder and files by name). An earlier
    prepare's is known by its manifest, its `qnn/` or its lock file (only a folder that passed this
    check gets one): a prepare killed between moving its model files and its `qnn/` in leaves neither
    of the others, and its rerun was refused as a folder holding other files."""
    shared = shared_with_others(out)
    if shared is not None:
        raise ModelLoadError(f"--out {out}: {shared}; use a folder only this user can change")
    if out.exists() and not out.is_dir():
        raise ModelLoadError(f"--out {out} is not a directory")
    if (
        out.is_dir()
        and any(path.name not in (LOCK, STAGING) for path in out.iterdir())
        and not ((out / MANIFEST).exists() or (out / CONTEXT_DIR).is_dir() or (out / LOCK).is_file())
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
        if (
            exc.errno == errno.ELOOP
        ):  # (it was "cannot open its .prepare.lock: [Errno 40] Too many levels ...")
            raise ModelLoadError(
                f"--out {out}: its {LOCK} is a symbolic link, not the lock file a prepare makes (never "
                f"followed): remove {out / LOCK} and run it again"
            ) from exc
        raise ModelLoadError(cannot_write(exc, f"make {out / LOCK}, the lock a prepare holds", out)) from exc
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
