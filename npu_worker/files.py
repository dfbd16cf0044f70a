"""Writing files: a file appears complete at its path or not at all, and never through a link.

`write_under_roots` is the one function every wav the worker produces goes through (the engine thread
calls it, via `PathPolicy.write_output`); `write_atomic` writes the worker's own files in its state dir.

Why component by component: a path checked when a job is admitted is written seconds or a restart
later, and anyone who can write inside an allowed root (the temp dir is shared by every local user)
could meanwhile swap a directory on that path for a symlink pointing elsewhere. Resolving the path
again at write time would only narrow that race; opening each directory with O_NOFOLLOW from the
root's descriptor, and creating and renaming the file relative to the last directory's descriptor,
closes it: a link anywhere under the root is refused, whenever it appeared.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from . import leftovers
from .late_closes import LATE_CLOSES, LateCloses, hold
from .leftovers import PART_SUFFIX
from .protocol import OutputPathNotAllowed, RefWavNotAllowed
from .replaced_group import take_replaced_group

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
PASS_THROUGH_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)  # EMLINK: FreeBSD's O_NOFOLLOW answer


TEMP_TOKEN_BYTES = 6  # a write's temp file: `.<name>.<12 hex digits>.part` (leftovers.py reads it back)


def temp_name(name: str) -> str:
    """The temp file a write of `name` goes through before its rename."""
    return f".{name}.{secrets.token_hex(TEMP_TOKEN_BYTES)}{PART_SUFFIX}"


TEMP_NAME_EXTRA = len(temp_name(""))  # bytes a temp file's name adds to its target's (19)


class LinkRefused(OSError):
    """A component under the root is a symlink, or the target may not be replaced (the caller's error)."""


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def lies_in(path: str, root: str) -> bool:
    """`os.path.commonpath([path, root]) == root` (False on its ValueError; TypeError for a path not a `str`,
    bytes too), from one split: ≈ 10 Python calls, 10 a `/synth` (benchmarks/SERVER_OVERHEAD.md, stop 61)."""
    if not isinstance(path, str) or not isinstance(root, str):  # (as commonpath: a record not ours)
        raise TypeError(f"a path is text, not {type(path).__name__} or {type(root).__name__}")
    absolute = root.startswith("/")
    if path.startswith("/") != absolute:
        return False
    below = [part for part in root.split("/") if part and part != "."]
    if ("/" if absolute else "") + "/".join(below) != root:
        return False  # (commonpath's answer is normalized: a root written otherwise is never it)
    return [part for part in path.split("/") if part and part != "."][: len(below)] == below


def split_under_root(path: str, roots: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """(root, components below it) for a normalized absolute `path`; the longest matching root wins.

    Raises ValueError when the path is not normalized or lies under none of the roots.
    """
    normal = os.path.isabs(path) and os.path.normpath(path) == path and not path.startswith("//")
    if not normal or "\x00" in path:  # (`//` is normpath's, a root pathlib never took one beneath)
        raise ValueError(f"{path!r} is not a normalized absolute path")
    matching = [root for root in roots if lies_in(path, root)]
    if not matching:
        raise ValueError(f"{path} is under none of the roots")
    root = max(matching, key=len)
    below = path[len(root) :].lstrip("/")  # (a normalized path: its root is where it starts)
    if not below:
        raise ValueError(f"{path} is a root itself")
    return root, tuple(below.split("/"))


@contextlib.contextmanager
def open_beneath(
    root: str, directories: Sequence[str], *, create: bool, private: bool = False
) -> Iterator[int]:
    """A descriptor of root/dir1/dir2/…, each opened without following links (created if `create`).

    The root itself is a real path (resolved at start) and is walked from `/` without following a link
    either: a root someone replaced with a link since (they own it, or a folder above it) is refused,
    not followed into the worker's own files."""
    if not os.path.isabs(root):
        raise ValueError(f"{root!r} is not an absolute path")
    above = [part for part in root.split("/") if part and part != "."]  # (Path's parts, less its own calls)
    fd = os.open("/", PASS_THROUGH_FLAGS if above else os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, name in enumerate([*above, *directories]):
            beneath = depth >= len(above)
            if create and beneath:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o750 if private else 0o777, dir_fd=fd)
            # Folders above the root are only passed through: O_PATH needs no read permission there
            # (a 0711 folder above a root), the root and what is below it are opened for reading.
            flags = PASS_THROUGH_FLAGS if depth < len(above) - 1 else DIRECTORY_FLAGS
            try:
                child = os.open(name, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in LINK_ERRORS and _is_link(fd, name):
                    why = f"{name} is a symbolic link" if beneath else f"{root} is reached through a link now"
                    raise LinkRefused(exc.errno, why) from None
                raise  # e.g. a plain file where a directory should be: a failed write, not a refusal
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def write_beneath(
    root: str,
    parts: Sequence[str],
    data: bytes,
    *,
    durable: bool = False,
    private: bool = False,
    closes: LateCloses = LATE_CLOSES,
) -> None:
    """Write root/parts… atomically (temp file + rename inside the final directory's descriptor),
    first removing temp files a crashed write left for the same name (`leftovers.LEFTOVERS`).

    An existing entry is replaced only if it is a regular file or link owned by this process's user:
    a worker run with more rights than its callers must not replace another user's file. No fsync
    unless `durable`: a killed worker never leaves a half file (the rename is atomic), and syncing each
    wav would cost a batch about a millisecond per section for a power-loss guarantee the job log does
    not give either. `private`: the worker's own file (a default output), folders 0750 and the file 0640
    whatever the umask; a caller's file gets the umask's modes, for group and others at most those of
    the regular file it replaces (a caller's 0600 wav, made again, came back 0644: readable by every
    local user); its owner, the worker, may always read and write it (it serves the section's audio).
    A file replaced is let go by `closes`, its blocks freed off this thread (`late_closes.py`), or on it
    where a write finds no room meanwhile (`LateCloses.with_room`).
    """
    closes.with_room(lambda: _write_beneath(root, parts, data, durable, private, closes))


def _write_beneath(
    root: str, parts: Sequence[str], data: bytes, durable: bool, private: bool, closes: LateCloses
) -> None:
    """`write_beneath`, once."""
    *directories, name = parts
    with open_beneath(root, directories, create=True, private=private) as dir_fd:
        existing = _check_replaceable(dir_fd, name)
        replaced = existing if existing is not None and stat.S_ISREG(existing.st_mode) else None
        for leftover in leftovers.LEFTOVERS.take(dir_fd, name):
            leftovers.remove_part_beneath(dir_fd, leftover)
        temp = temp_name(name)
        mode = 0o640 if private else 0o666
        if replaced is not None:  # (the worker, its owner, reads and writes its outputs)
            mode &= stat.S_IMODE(replaced.st_mode) | 0o600
        out = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode if replaced is None else mode & ~0o070,  # no group's until it is the replaced one's
            dir_fd=dir_fd,
        )
        try:
            try:  # (by the descriptor: a file object's fstat, isatty and lseek were 3 syscalls a wav)
                if replaced is not None:
                    take_replaced_group(out, replaced, mode & 0o070)
                written = memoryview(data)
                while written:
                    written = written[os.write(out, written) :]
                if durable:
                    os.fsync(out)
            finally:
                os.close(out)
            _put_in_place(dir_fd, temp, name, replacing=existing is not None, closes=closes)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=dir_fd)
            raise


def _check_replaceable(dir_fd: int, name: str) -> os.stat_result | None:
    """Refuse to replace what is not the worker's own file; returns what is there (None: nothing). A
    regular file's modes and group bound the new file's (a link's are no file's)."""
    try:
        existing = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(existing.st_mode):
        raise LinkRefused(errno.EISDIR, f"{name} is a directory")
    if not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
        raise LinkRefused(errno.EPERM, f"{name} is not a regular file")
    if existing.st_uid != os.geteuid():
        raise LinkRefused(errno.EPERM, f"{name} belongs to another user")
    return existing


def _put_in_place(dir_fd: int, temp: str, name: str, *, replacing: bool, closes: LateCloses) -> None:
    """Rename `temp` to `name`; where nothing was there at the check, without replacing what appeared
    since (a hard link, which fails where `name` exists): another user who made `name` in a shared
    folder meanwhile had their file replaced by a worker run as root (`_check_replaceable` refuses it;
    the sticky bit stops the others). What appeared is checked, and replaced only if it may be."""
    if not replacing:
        try:
            os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            _check_replaceable(dir_fd, name)
        except OSError as exc:  # a file system without hard links: the rename, as before
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
        else:
            os.unlink(temp, dir_fd=dir_fd)
            return
    held = hold(dir_fd, name)  # (what the rename replaces, freed at this descriptor's close)
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    finally:
        if held is not None:
            closes.close(held)


def write_under_roots(path: str, data: bytes, roots: Sequence[str], *, private: bool = False) -> None:
    """The single way the worker writes an output: atomically, beneath one of `roots`, no link followed.

    Raises OutputPathNotAllowed for a path outside the roots or one that crosses a link or a
    non-directory; other OSErrors (disk full, permissions) pass through for the caller to report.
    """
    try:
        root, parts = split_under_root(path, roots)
    except ValueError as exc:
        raise OutputPathNotAllowed(str(exc)) from None
    try:
        write_beneath(root, parts, data, private=private)
    except LinkRefused as exc:
        raise OutputPathNotAllowed(f"{path}: {exc.strerror}") from None


class TooLarge(ValueError):
    """A file holds more than the reader accepts."""


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, if it holds at most `limit`; else TooLarge.

    Opened without blocking and checked before reading: a FIFO or device swapped in at that path is an
    OSError at once, not a read that waits for a writer forever or never ends, and a huge file is never
    read whole (a caller names the path; what is there is anyone's).
    """
    return _read_at_most(os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK), str(path), limit)


def regular_file(path: str) -> os.stat_result | None:
    """The regular file's stat at `path` (a link followed), or None: one stat, so a file removed
    between two checks by name is "not there", never an OSError (a 500) for a caller's path."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def read_own(path: str | Path, limit: int) -> bytes:
    """The bytes of a file the worker wrote for itself (its cache), if it is still that: a regular file
    of this process's user with one link, reached without following a link at its name, at most
    `limit` bytes; else OSError (or TooLarge)."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW
    return _read_at_most(os.open(path, flags), str(path), limit, own=True)


def read_beneath(path: str, roots: Sequence[str], limit: int, *, own: bool, one_name: bool = False) -> bytes:
    """The bytes of a file beneath one of `roots`, read the way the worker writes: each directory and
    the file opened without following a link, and without blocking (a FIFO put there is not waited on);
    a regular file of at most `limit` bytes (else OSError or TooLarge).

    `own`: it must also still be the file the worker made (this process's user, a single link), for a
    section's wav served back (`open_beneath_checked`, `PathPolicy.open_output`): a symlink or hard link swapped in by someone
    who can write in that folder (the temp dir is everyone's), or another user's file, is refused, so a
    section's audio can never be a way to read another file. A caller's reference voice is anyone's
    (`PathPolicy.read_reference`): only the no-link walk, the bound and `one_name` apply (a single
    name: see `one_name_only`).
    """
    fd = _open_file_beneath(path, roots)
    if one_name:
        try:
            one_name_only(os.fstat(fd), path)
        except BaseException:
            os.close(fd)
            raise
    return _read_at_most(fd, path, limit, own=own)


def one_name_only(info: os.stat_result, path: str) -> None:
    """RefWavNotAllowed where a caller's file has other names (hard links): anyone may link a file they
    cannot read into a folder they can write in, where the kernel's fs.protected_hardlinks is off (as in
    many containers), and the worker then read it for them as if it lay beneath a root (its other name
    may lie anywhere on that file system). By name, not an OSError: the engine, which reads the
    transcript `ref.txt` only as the section runs, said of one so refused "EngineError: reference ...
    has no transcript: put it in ref.txt beside the wav", of a transcript that was there. A folder: no file."""
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise RefWavNotAllowed(
            f"{path}: it has {info.st_nlink} names (hard links); a reference must have one"
        )


def _open_file_beneath(path: str, roots: Sequence[str]) -> int:
    """A read descriptor of the file at `path` beneath one of `roots`: each directory and the file
    opened without following a link (LinkRefused), and without blocking. OSError: under no root."""
    try:
        root, parts = split_under_root(path, roots)
    except ValueError as exc:
        raise OSError(errno.EINVAL, str(exc)) from None
    *directories, name = parts
    with open_beneath(root, directories, create=False) as dir_fd:
        try:
            return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in LINK_ERRORS and _is_link(dir_fd, name):
                raise LinkRefused(exc.errno, f"{name} is a symbolic link") from None
            raise


def open_beneath_checked(path: str, roots: Sequence[str], limit: int, *, own: bool) -> BinaryIO:
    """`read_beneath`'s file, checked the same way but left open to be sent in pieces (a section's wav
    can be hundreds of MB: read whole for each caller that does not read its answer, a few dozen
    callers held gigabytes). The caller closes it."""
    fd = _open_file_beneath(path, roots)
    stream = os.fdopen(fd, "rb")
    try:
        _check_open(fd, path, limit, own=own)
    except BaseException:
        stream.close()
        raise
    return stream


def _check_open(fd: int, path: str, limit: int, *, own: bool) -> int:
    """Its size; OSError unless `fd` is a regular file (and, when `own`, this user's with one link);
    TooLarge past `limit` bytes."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", path)
    if own and (info.st_uid != os.geteuid() or info.st_nlink != 1):
        raise OSError(errno.EPERM, "no longer the file the worker wrote", path)
    if info.st_size > limit:
        raise TooLarge(f"{path} is {info.st_size} bytes, more than the {limit} accepted")
    return info.st_size


def _read_at_most(fd: int, path: str, limit: int, *, own: bool = False) -> bytes:
    """Read the open `fd` (closed after) if it is a regular file of at most `limit` bytes (and, when
    `own`, this user's with one link)."""
    with os.fdopen(fd, "rb") as stream:
        size = _check_open(fd, path, limit, own=own)
        data = stream.read(size + 1)  # read(limit + 1) took a 64 MiB buffer for a reference of any size
        if len(data) > size:  # it grew since the fstat: on, up to the limit
            data += stream.read(limit + 1 - len(data))
    if len(data) > limit:
        raise TooLarge(f"{path} is more than the {limit} bytes accepted")
    return data


def check_file_under_roots(path: str, roots: Sequence[str]) -> None:
    """RefWavNotAllowed unless `path` is a regular file beneath a root reached without any link."""
    try:
        fd = _open_file_beneath(path, roots)
        try:
            info = os.fstat(fd)
            regular = stat.S_ISREG(info.st_mode)
            one_name_only(info, path)
        finally:
            os.close(fd)
    except ValueError as exc:
        raise RefWavNotAllowed(str(exc)) from None
    except OSError as exc:
        raise RefWavNotAllowed(f"{path}: {exc.strerror or exc}") from None
    if not regular:
        raise RefWavNotAllowed(f"{path} is not a regular file")


def write_atomic(path: str | Path, data: bytes, *, durable: bool = True, mode: int = 0o600) -> None:
    """Write via a temp file in the target directory + os.replace; parent dirs are created.

    `durable`: fsync the data before the rename (job requests, which recovery depends on). `mode`: the
    file's, whatever the umask (a prepared model's manifest is read by the service's user).
    """
    target = Path(path)
    target.parent.mkdir(mode=0o750, parents=True, exist_ok=True)  # the worker's own: no one else writes
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=PART_SUFFIX, dir=target.parent)
    try:
        if mode != 0o600:  # mkstemp's
            os.fchmod(fd, mode)
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
