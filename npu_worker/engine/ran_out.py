"""What ran out when compiling for the NPU failed to write: a full disk, no free inodes, a used-up
quota, the open-file limit, said with where and what to do.

onnxruntime reports these in its own words ("SystemError : 28", "system error number 24", or "Failed to
write/open context cache file" with no number), and its Python session quietly retried a failed QNN
compile on the CPU: a disk out of inodes read as "QNN runs none of the nodes" (HTP has no kernel...).
"""

from __future__ import annotations

import errno
import os
import re
import resource
from pathlib import Path

RAN_OUT = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EMFILE, errno.ENFILE})
# onnxruntime's and QNN's ways of carrying an errno in a message, and Python's own
_NUMBERED = re.compile(r"SystemError : (\d+)|system error number (\d+)|\[Errno (\d+)\]")
# onnxruntime's words for an EP context file it could not make, with no number
_CONTEXT_NOT_MADE = ("Failed to write context cache file", "Failed to open context cache file")
_ALMOST_FULL = 1 << 20  # bytes: below this a filesystem counts as full once a write has failed on it


def error_number(exc: BaseException) -> int | None:
    """The errno an exception (or one it was raised from) carries, itself or in its message."""
    seen: BaseException | None = exc
    visited: set[int] = set()  # (a chain may loop back on itself)
    while seen is not None and id(seen) not in visited:
        visited.add(id(seen))
        if isinstance(seen, OSError) and seen.errno is not None:
            return seen.errno
        found = _NUMBERED.search(str(seen))
        if found:
            return int(next(group for group in found.groups() if group))
        seen = seen.__cause__ or seen.__context__
    return None


def what_ran_out(exc: BaseException, folder: Path, shown: Path | None = None) -> str | None:
    """A clause saying what ran out for a write into `folder` (named as `shown`, a folder on the same
    filesystem the user knows: a prepare's --out, not its staging) that raised `exc`, where, and what
    to do; None when `exc` is no such failure (a placement or compiler failure keeps its own words)."""
    number, room = error_number(exc), folder
    folder = shown or folder
    if number is not None and number not in RAN_OUT:
        return None
    if number is None and not any(words in str(exc) for words in _CONTEXT_NOT_MADE):
        return None
    if number == errno.EMFILE:
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return (
            f"this process may open no more files (its limit, `ulimit -n`, is {limit}): raise it "
            "(`ulimit -n 65536`, LimitNOFILE= in a service) and run it again"
        )
    if number == errno.ENFILE:
        return "the system's table of open files is full (`sysctl fs.file-max`): close files or raise it"
    if number == errno.EDQUOT:
        return (
            f"the disk quota on the filesystem of {folder} is used up (`quota -s` shows it): free some "
            "of this user's files there or use a folder on another filesystem"
        )
    space = _room(room)
    if space is None:
        return None if number is None else f"the filesystem of {folder} is full ({os.strerror(number)})"
    inodes, free = space
    if inodes == 0:
        return (
            f"the filesystem of {folder} has no free inodes (no new file can be made there, whatever "
            f"its free bytes, {free / 1e6:.1f} MB: `df -i` shows it): remove files there or use a folder "
            "on another filesystem"
        )
    if free < _ALMOST_FULL:
        return (
            f"the filesystem of {folder} is full ({free / 1e6:.1f} MB free, `df -h` shows it): free "
            "space there or use a folder on another filesystem"
        )
    if number == errno.ENOSPC:  # what the failed write took is gone again: which ran out is not known
        return (
            f"the filesystem of {folder} had no room left (No space left on device; now {inodes} inodes and "
            f"{free / 1e6:.1f} MB free: `df -i`, `df -h`): free space or inodes there or use a folder on "
            "another filesystem"
        )
    return None  # room enough: onnxruntime's "could not write" is something else (permissions, say)


def _room(folder: Path) -> tuple[int, int] | None:
    """Free inodes and free bytes (those this user may take: root may take the reserved blocks) on the
    filesystem of `folder` or its nearest existing parent; None when none can be read."""
    for place in (folder, *folder.parents):
        try:
            found = os.statvfs(place)
        except OSError:
            continue
        blocks = found.f_bfree if os.geteuid() == 0 else found.f_bavail
        inodes = found.f_ffree if os.geteuid() == 0 else found.f_favail
        # a filesystem that does not count inodes (btrfs, some network ones) reports 0 of 0
        return (inodes if found.f_files else 1), blocks * found.f_frsize
    return None
