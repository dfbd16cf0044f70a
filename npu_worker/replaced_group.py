"""The group a file written over another takes from it: the caller's, not the worker's.

Split from `files.write_beneath`, which creates the new file without group bits and calls this before
its first byte is written, while the file is reachable by its temp name alone.
"""

from __future__ import annotations

import os
import stat


def take_replaced_group(fd: int, replaced: os.stat_result, group_bits: int) -> None:
    """Give the new file (created without group bits) the replaced file's group, then `group_bits` less
    the umask's. A caller's 0640 wav of a small group, made again, had the worker's group (or the
    folder's) and the same 0640: readable by a group the caller never chose. Where the worker may not
    give that group (not one of its groups), or its umask cannot be read, the file keeps no group bits."""
    info = os.fstat(fd)
    if info.st_gid != replaced.st_gid:
        try:
            os.fchown(fd, -1, replaced.st_gid)
        except OSError:  # EPERM; EINVAL: a group this user namespace does not map
            return
    umask = current_umask()
    if group_bits and umask is not None:
        os.fchmod(fd, stat.S_IMODE(info.st_mode) | (group_bits & ~umask))


def current_umask() -> int | None:
    """This process's umask, read without setting it (`os.umask` sets it for every thread meanwhile:
    a folder made then would be 0777); None where /proc does not say (Linux before 4.7, other systems)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        return None
    return None
