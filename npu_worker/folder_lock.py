"""An exclusive lock on a folder the worker uses, that no other local user can take.

It was a `flock` on the folder itself, opened read-only: any local user who could list the folder (an
operator's 0755 state dir, the 0750 voices folder's group) could take the same lock and hold it for
ever, so `serve` refused to start ("in use by another npu-worker serve") or every voice upload and
delete waited for good. The lock is now a `flock` on `LOCK_NAME`, a 0600 file of this user inside the
folder, opened without following a link: others cannot open it. Its holder removes it at the end; the
kernel lets go of the `flock` when its holder dies, `kill -9` included, so a file left behind blocks no
one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_NAME = ".npu-worker.lock"
# O_NONBLOCK: a FIFO planted at the name is refused below, never waited on at the open.
LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
NO_FLOCK = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)  # a filesystem that takes none (some NFS)
# `_own_users_flock_holder`: a held `flock` on the folder whose holder cannot be told, and the usual why.
CANNOT_TELL = "cannot tell"
CANNOT_TELL_WHY = (
    "/proc/locks unreadable, or naming no holder of ours or another user's: a pid of another namespace, "
    "one that handed the flock on and ended, btrfs naming the folder by another device"
)
# Told a filesystem takes no `flock` (the OSError): a caller that may go on without the lock says so;
# without one, that OSError is raised.
NoFlock = Callable[[OSError], None]


def open_lock_file(dir_fd: int, name: str = LOCK_NAME) -> int:
    """The folder's lock file, made if missing; PermissionError when what is at its name is not a plain
    file of this user (another's could be held by them) or has another name too (a hard link someone
    who can write the folder made to a file of this user's they can open: they could hold it, and it
    would be made 0600), ELOOP when it is a link (never followed)."""
    descriptor = os.open(name, LOCK_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise PermissionError(errno.EPERM, f"its {name} is not a plain file of this user: remove it")
        if info.st_nlink > 1:  # (0: its holder removed it at its end since the open: `_take_lock_file`)
            raise PermissionError(
                errno.EPERM, f"its {name} is a hard link to a file with other names: remove it"
            )
        if info.st_mode & 0o077:  # one others could open (read-only is enough to hold a flock)
            os.fchmod(descriptor, 0o600)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@contextlib.contextmanager
def holding_folder_lock(
    dir_fd: int, *, wait: bool = True, name: str = LOCK_NAME, no_flock: NoFlock | None = None
) -> Iterator[None]:
    """Hold the lock of the folder open at `dir_fd` while inside: across threads (each entry opens its
    own descriptor) and processes. `wait=False`: BlockingIOError at once when another holds it. The
    file (`name`: make-test-model's has its own) is removed at the end while still held (the folder is
    left as it was found). `no_flock`: see `NoFlock`."""
    descriptor = _take_lock_file(dir_fd, wait, name, no_flock)
    try:
        yield
    finally:
        try:
            with contextlib.suppress(OSError):  # a file left behind blocks no one
                os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(descriptor)


def _take_lock_file(dir_fd: int, wait: bool, name: str, no_flock: NoFlock | None) -> int:
    """The held lock file's descriptor. One that waited on a file its holder removed at its end holds
    a file no longer at the name: it opens the one there now (or makes it) instead."""
    while True:
        descriptor = open_lock_file(dir_fd, name)
        try:
            _flock(descriptor, wait, no_flock)
            now: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        except BaseException:
            os.close(descriptor)
            raise
        mine = os.fstat(descriptor)
        if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            return descriptor
        os.close(descriptor)


def _flock(descriptor: int, wait: bool, no_flock: NoFlock | None) -> None:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if no_flock is None or exc.errno not in NO_FLOCK:
            raise
        no_flock(exc)


@contextlib.contextmanager
def locked_directory(
    path: str | Path, *, wait: bool = True, name: str = LOCK_NAME, no_flock: NoFlock | None = None
) -> Iterator[None]:
    """`holding_folder_lock` for the folder at `path`."""
    dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        with holding_folder_lock(dir_fd, wait=wait, name=name, no_flock=no_flock):
            yield
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def locked_private_folder(path: str | Path, *, wait: bool = True) -> Iterator[None]:
    """A `flock` on the folder itself, for a folder no other user can open (a specialisation's scratch
    folder, `tempfile`'s 0700): no file is made in it, so it is taken on a disk out of inodes (the
    worker then compiles uncached and says why), and a worker of an earlier version holding the folder
    this way is still seen as its live user by `remove_dead_scratch`."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _flock(descriptor, wait, None)
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def kept_from_earlier_workers(path: str | Path) -> Iterator[None]:
    """While inside, a worker of an earlier version, which held the state dir by a `flock` on the folder
    itself, neither runs beside this one nor is run beside: the folder's `flock` is taken too when free
    (one started later is refused), and one held by a process of this user (the earlier worker) is
    BlockingIOError. One held by another user is theirs to hold (any user who can list the folder can
    take it) and refuses nothing, as a holder that cannot be told (`/proc/locks` unreadable, a pid of
    another namespace, btrfs: its `stat` names a subvolume's device, `/proc/locks` the filesystem's) refuses
    nothing: it fails open, and says so in the log (the operator is the one who can tell)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _own_users_flock_holder(os.fstat(descriptor))
            if isinstance(holder, int):
                raise BlockingIOError(
                    errno.EWOULDBLOCK, f"process {holder} of this user holds a flock on the folder"
                ) from None
            if holder == CANNOT_TELL:
                log.warning(
                    "%s: someone holds a flock on the folder itself, as a worker of an earlier version did, "
                    "and who cannot be told (%s): starting anyway; make sure no other npu-worker serve "
                    "uses this state dir",
                    path,
                    CANNOT_TELL_WHY,
                )
        except OSError as exc:
            if exc.errno not in NO_FLOCK:
                raise
        yield
    finally:
        os.close(descriptor)


def _own_users_flock_holder(folder: os.stat_result) -> int | str | None:
    """The pid of a process of this user, not this one, that holds a `flock` on `folder`, from
    `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`; a waiter's line has `->`) and
    with the folder open: a line names the pid that took the `flock`, which may have handed it on to a
    child and ended, its pid then reused by any process of this user (another user who can list the
    folder could so plant a pid of ours and have `serve` refused). None: another user's; `CANNOT_TELL`
    when no line names a holder that can be told (none names the folder, or only pids of another
    namespace (0), ended, or of this user without the folder open)."""
    where = f"{os.major(folder.st_dev):02x}:{os.minor(folder.st_dev):02x}:{folder.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return CANNOT_TELL
    others = False
    for fields in (line.split() for line in lines):
        if len(fields) < 6 or fields[1] != "FLOCK" or fields[5] != where or not fields[4].isdigit():
            continue
        pid = int(fields[4])
        uid = _uid_of(pid) if pid not in (0, os.getpid()) else None
        if uid == os.geteuid() and _has_open(pid, folder):
            return pid
        others = others or (uid is not None and uid != os.geteuid())
    return None if others else CANNOT_TELL


def _has_open(pid: int, folder: os.stat_result) -> bool:
    """Whether process `pid` has `folder` open (False when its descriptors cannot be looked at)."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for name in names:
        try:
            found = os.stat(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (folder.st_dev, folder.st_ino):
            return True
    return False


def _uid_of(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
