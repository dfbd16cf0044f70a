"""A caller's path resolved as realpath resolves it, except through a link another user planted in a
folder others can write in.

At admission `paths.py` resolved a caller's path with os.path.realpath, which follows every link. A
link that another local user put in a world-writable folder (`/tmp`, a shared output folder) could
thus point the worker's write at another of the worker's own files under the roots (another caller's
lecture, a voice), which it then replaced, or its read at one. The kernel refuses such links to every
process (fs.protected_symlinks), but realpath never opens them, so it never asked; and many containers
turn the setting off. The walk below resolves the path as realpath does and applies the kernel's rule
to each link on the way: in a folder others can write in a link is followed only when it is the
worker's own or the folder owner's. The kernel asks it in world-writable sticky folders only; in one
that is not sticky anyone may put a link there just as well (and replace the others), and a folder
writable by a group with someone else in it (`other_writers.writable_by_others`: not the owner's own
private group) lets that someone do the same, so the rule holds there too. One level down too: in a
folder another user made in such a folder (`/tmp/shared/lecture/`, made before the caller's first
write there) a link not the worker's own is refused, wherever it lies beneath; the kernel's rule,
which asks only the link's own folder, let that user's link through.

On descriptors: each part is opened (`O_PATH | O_NOFOLLOW`) beneath the descriptor of the folder
already checked, the checks read the opened entry (`fstat`) and a link's target is read from the
same descriptor (`readlinkat(fd, "")`). Looked at by name, then read by name, an entry another user
swapped in between the two (anyone may rename entries in a folder that is not sticky) was followed
unchecked: its target became the path the worker wrote, another caller's lecture.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import stat
import threading
from dataclasses import dataclass

from .other_writers import writable_by_others

MAX_LINKS = 40  # as the kernel's: past it an open fails (ELOOP), so the path is refused (a loop too)
O_PATH = getattr(os, "O_PATH", 0)  # Linux; elsewhere a link's own descriptor cannot be had (below)
LOOKUP = (O_PATH or os.O_NONBLOCK) | os.O_NOFOLLOW | os.O_CLOEXEC  # without O_PATH: a FIFO never waited on
UNOPENED_LINK = (errno.ELOOP, errno.EMLINK)  # O_NOFOLLOW met a link, where O_PATH cannot open one


class UnfollowedLink(Exception):
    """A link on the path the walk does not follow; the message begins "goes through" and says which."""


class PlantedLink(UnfollowedLink):
    """The path goes through a link another user put in a world-writable folder (the message says which)."""


class MovedFolder(UnfollowedLink):
    """A folder on the path was moved while the walk went through it (`..` came back elsewhere), or its
    `..` cannot be opened (the message says which)."""


class ProcessLink(UnfollowedLink):
    """The path goes through a link of the process filesystem (`/proc/self/fd/2`, `/proc/self/root`):
    the kernel follows it to a process's open file or folder, whatever its text says."""


class TooManyLinks(UnfollowedLink):
    """The path goes through more links than the system follows in one path (a loop, or a long chain)."""


@dataclass
class Part:
    """A part of the path resolved so far: its real path and, where it exists, its stat and (while
    the walk may still need it) its open descriptor."""

    path: str
    info: os.stat_result | None = None
    fd: int | None = None


def resolve_unplanted(path: str) -> str:
    """The real path of the absolute `path`, as os.path.realpath resolves it (parts that do not exist
    are taken as written), or PlantedLink, TooManyLinks or MovedFolder. One walk on descriptors both
    resolves and checks: what each check looked at is what the walk then reads or goes into. A folder
    renamed away after the walk went into it leaves the path naming what is there now: the write, which
    follows no link (files.py), lands there or nowhere else."""
    resolving = Resolving(os.geteuid(), parts_reversed(path))  # the next part last: each taken in O(1)
    try:
        while resolving.pending:
            resolving.take(resolving.pending.pop())
        return resolving.walk.top.path
    finally:
        resolving.walk.close()


class Walk:
    """The parts resolved so far, from `/`, none of them a link. Only the deepest part that exists
    is held open (and the folder of a file, which `..` goes back to): a path 2 000 folders deep held
    2 000 descriptors. `..` out of a folder opens its parent from it and checks it is the folder the
    walk went through (device and inode), so the walk never goes back by name."""

    def __init__(self) -> None:
        top = os.open("/", LOOKUP | os.O_DIRECTORY)
        self.parts = [Part("/", os.fstat(top), top)]

    @property
    def top(self) -> Part:
        return self.parts[-1]

    def down(self, part: Part) -> None:
        above = self.top
        if part.info is not None and stat.S_ISDIR(part.info.st_mode):
            close(above)  # a folder's own descriptor brings `..` back to it
        self.parts.append(part)

    def up(self) -> None:
        if len(self.parts) == 1:  # `/..` is `/`
            return
        left = self.parts.pop()
        back = self.top
        if back.fd is None and back.info is not None:
            assert left.fd is not None  # `down` closed it for a folder, which is open
            try:
                fd = os.open("..", LOOKUP | os.O_DIRECTORY, dir_fd=left.fd)
            except OSError as exc:  # no search right in it (the system's open is refused too), not a move
                raise MovedFolder(
                    f"goes through {left.path}/.., which cannot be opened ({exc.strerror})"
                ) from None
            finally:
                close(left)
            if not os.path.samestat(os.fstat(fd), back.info):
                os.close(fd)
                raise MovedFolder(
                    f"goes through {left.path}, a folder moved elsewhere while the path was resolved"
                )
            back.fd = fd
        else:
            close(left)

    def close(self) -> None:
        for part in self.parts:
            close(part)


class Resolving:
    """One path's resolution under way: the parts still to walk (the next last, so a link's target costs
    its own length, whatever it adds), the walk so far, the folder on it another user made in a shared
    one (`planted`: its path, owner and how others write there) and the links followed so far."""

    def __init__(self, me: int, pending: list[str]) -> None:
        self.me = me
        self.pending = pending
        self.walk = Walk()
        self.planted: tuple[str, int, str] | None = None
        self.links = 0

    def take(self, part: str) -> None:
        """Walk one part: `.` stays, `..` goes back, a missing entry is taken as written, a folder or a
        file is gone into, and a link, once checked, adds its target to the parts still to walk."""
        if part == ".":
            return
        if part == "..":
            self.walk.up()
            if self.planted is not None and not is_within(self.walk.top.path, self.planted[0]):
                self.planted = None
            return
        folder = self.walk.top
        current = os.path.join(folder.path, part)
        entry = open_entry(folder, part)
        if entry is None:  # not there (or not a folder above it): taken as written
            self.walk.down(Part(current))
            return
        fd, info = entry
        assert folder.fd is not None and folder.info is not None  # open_entry opened in it
        shared = others_write_in(folder.info, folder.fd, folder.path)
        if not stat.S_ISLNK(info.st_mode):
            if self.planted is None and shared and info.st_uid not in (self.me, folder.info.st_uid):
                self.planted = (current, info.st_uid, shared)  # whatever it holds, that user put there
            self.walk.down(Part(current, info, fd))
            return
        target = self.checked_target(folder, part, fd, info, shared)
        if target is None:  # gone since: taken as written
            self.walk.down(Part(current))
            return
        self.pending.extend(parts_reversed(target))
        if target.startswith("/"):
            self.walk.close()
            self.walk = Walk()
            self.planted = None

    def checked_target(
        self, folder: Part, name: str, fd: int | None, info: os.stat_result, shared: str
    ) -> str | None:
        """The text of the link `name` open at `fd` once every check let it through (None: gone since);
        its descriptor is closed either way."""
        current = os.path.join(folder.path, name)
        try:
            check_not_process_link(current, info.st_dev)
            if shared or self.planted is not None:
                check_hard_linked(current, info.st_nlink)
            if info.st_uid != self.me:
                assert folder.info is not None  # the folder it was opened in exists
                owner_shared = (folder.info.st_uid, shared) if shared else None
                check_link(current, info.st_uid, folder.path, owner_shared, self.planted)
            self.links += 1
            if self.links > MAX_LINKS:  # what was left unresolved held links, which the write then refused
                raise TooManyLinks(
                    f"goes through more than {MAX_LINKS} links (a loop, or the system's limit)"
                )
            return read_link(fd, folder, name)
        finally:
            if fd is not None:
                os.close(fd)


def open_entry(folder: Part, name: str) -> tuple[int | None, os.stat_result] | None:
    """`name` in `folder` opened without following it, and its stat; None where it is not there. The
    descriptor is None only for a link where the system has no O_PATH (then `read_link` reads it by
    name, in the folder's descriptor: the folder at least is the one checked)."""
    if folder.fd is None:
        return None
    try:
        fd = os.open(name, LOOKUP, dir_fd=folder.fd)
    except OSError as exc:
        if O_PATH or exc.errno not in UNOPENED_LINK:
            return None
        try:
            return None, os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
        except OSError:
            return None
    return fd, os.fstat(fd)


def read_link(fd: int | None, folder: Part, name: str) -> str | None:
    """The target of the link open at `fd` (the very entry checked, even if renamed over since), or
    None where it cannot be read."""
    try:
        if fd is not None:
            return os.readlink("", dir_fd=fd)  # readlinkat(fd, ""): the link itself, not its target
        return os.readlink(name, dir_fd=folder.fd)
    except OSError:
        return None


def others_write_in(info: os.stat_result, fd: int, path: str) -> str:
    """How someone other than the folder's owner can add or rename entries in the folder open at `fd`
    ("world-writable"; "group-writable": a group with someone else in it, or a POSIX ACL, as
    `other_writers.writable_by_others` asks), or "" where no one can."""
    if info.st_mode & stat.S_IWOTH:
        return "world-writable"
    if not info.st_mode & stat.S_IWGRP:
        return ""
    if writable_by_others(info):  # a group that is not the owner's own
        return "group-writable"
    try:  # an ACL: its mask in the group bits, and a named user may write (asked of the open folder)
        os.getxattr(f"/proc/self/fd/{fd}", "system.posix_acl_access")
    except FileNotFoundError:  # no /proc: by name
        return "group-writable" if writable_by_others(info, path) else ""
    except OSError:  # none (ENODATA), or a filesystem without ACLs
        return ""
    return "group-writable"


def close(part: Part) -> None:
    if part.fd is not None:
        os.close(part.fd)
        part.fd = None


def check_link(
    link: str, owner: int, folder: str, shared: tuple[int, str] | None, planted: tuple[str, int, str] | None
) -> None:
    """PlantedLink where another user's `link` could have been put there by someone else than the
    worker: in a `folder` others can write in (`shared`: its owner, and how it is shared) by anyone but
    its owner (the kernel's rule), or anywhere beneath a folder another user made in such a one
    (`planted`: a folder the caller's path expected to find or to have made, one level down from the
    kernel's rule)."""
    if planted is not None:
        raise PlantedLink(
            f"goes through {link}, a link in {planted[0]}, a folder that user {planted[1]} made in a {planted[2]} folder"
        )
    if shared is not None and owner != shared[0]:
        raise PlantedLink(
            f"goes through {link}, a link that another user (uid {owner}) put in the {shared[1]} folder {folder}"
        )


def check_not_process_link(link: str, device: int) -> None:
    """ProcessLink for a link on a process filesystem: its text is no path (`/tmp/x.log (deleted)`,
    `pipe:[12]`), and the file it leads to is the worker's own open one (its log, at `/proc/self/fd/1`,
    which a caller's wav replaced)."""
    if device in process_filesystems():
        raise ProcessLink(
            f"goes through {link}, a link of the process filesystem (/proc) to a process's open file or"
            " folder, which the worker does not follow: name the file itself"
        )


def process_filesystems() -> frozenset[int]:
    """The devices of the `proc` filesystems mounted; none where the mount table cannot be read."""
    return PROCESS_MOUNTS.devices()


class ProcessMounts:
    """The `proc` filesystems' devices, read from `/proc/self/mountinfo` again only when the kernel
    flags the open table to `poll` (a mount or an unmount since): read at each link a walk met, a path
    of 39 links (`/bin/../bin/..`, where /bin is a link: anyone's) read it 39 times, 1000 paths a batch."""

    def __init__(self, table: str = "/proc/self/mountinfo") -> None:
        self.table = table
        self._lock = threading.Lock()
        self._table: tuple[int, int] | None = None  # (pid, fd): a forked child opens its own
        self._changes = select.poll()
        self._devices: frozenset[int] = frozenset()

    def devices(self) -> frozenset[int]:
        with self._lock:
            try:
                if self._table is None or self._table[0] != os.getpid():
                    self._open()
                elif self._changes.poll(0):
                    self._devices = proc_devices(read_whole(self._table[1]))
            except (OSError, ValueError):
                self._close()  # opened and read again at the next link
                return frozenset()
            return self._devices

    def _open(self) -> None:
        self._close()
        self._changes = select.poll()
        fd = os.open(self.table, os.O_RDONLY | os.O_CLOEXEC)
        self._table = (os.getpid(), fd)
        self._changes.register(fd, select.POLLPRI | select.POLLERR)
        self._devices = proc_devices(read_whole(fd))

    def _close(self) -> None:
        if self._table is not None:
            with contextlib.suppress(OSError):  # (a forked child closes its own copy)
                os.close(self._table[1])
        self._table = None


PROCESS_MOUNTS = ProcessMounts()


def read_whole(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def proc_devices(table: bytes) -> frozenset[int]:
    """The devices of the `proc` mounts in a mount table (`/proc/self/mountinfo`'s lines)."""
    devices = set()
    for line in table.decode("utf-8", errors="replace").splitlines():
        fields, _, kind = line.partition(" - ")
        numbers = fields.split()
        if kind.split(" ", 1)[0] == "proc" and len(numbers) > 2:
            major, _, minor = numbers[2].partition(":")
            devices.add(os.makedev(int(major), int(minor)))
    return frozenset(devices)


def check_hard_linked(link: str, names: int) -> None:
    """PlantedLink for a link with other names (hard links) where another user could have put it: a
    link's owner says who made it, not who linked it there, and where fs.protected_hardlinks is off
    anyone may hard-link the worker's own link (an operator's `current -> lectures/alice`) into a
    shared folder, which the walk then followed as the worker's own."""
    if names > 1:
        raise PlantedLink(
            f"goes through {link}, a link with {names} names (hard links) in a folder another user can write in"
        )


def is_within(path: str, folder: str) -> bool:
    """`path` is `folder` or lies beneath it (both real, normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def parts_reversed(path: str) -> list[str]:
    """The components of `path`, last first (a stack: popping the first part of a list moved the rest,
    and a chain of 40 links of 2 000 parts each held a thread 1.2 s, realpath 0.04 s)."""
    return [part for part in reversed(path.split("/")) if part]
