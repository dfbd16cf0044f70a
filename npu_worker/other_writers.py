"""Whether a user other than this one (and root) could replace a path or write in a folder.

Apart from `files.py` (which opens, reads and writes beneath roots without following a link) because
this is the other half of trusting a file by its name: before the worker keeps its state, loads a
model or a voice, or measures wavs in a folder, it asks who else could put or swap a file there.
Ownership, mode bits, sticky folders, a user's private group and POSIX ACLs: no file is opened.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path


def replaceable_by_others(path: str | Path) -> str | None:
    """Why a user other than this one (and root) could replace `path` or a folder above it, or None.

    Along the path as given and along its real path, every entry must be this user's or root's (an
    owner can rename or re-point it), and every folder above must be writable by no one else, or
    sticky (others may then add entries but not replace ours). A part not made yet stops the walk:
    the worker makes it, its own. What the walk refuses: a state dir or prepared model in a folder
    a local user owns, or reached through their link."""
    me = os.geteuid()
    absolute = os.path.abspath(path)
    for chain in dict.fromkeys([absolute, os.path.realpath(absolute)]):
        parts = Path(chain).parts
        for depth in range(1, len(parts) + 1):
            current = os.path.join(*parts[:depth])
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                break
            if info.st_uid not in (0, me):
                return f"{current} belongs to another user (uid {info.st_uid})"
            shared = writable_by_others(info, current) and not info.st_mode & stat.S_ISVTX
            if depth < len(parts) and stat.S_ISDIR(info.st_mode) and shared:
                mode = info.st_mode & 0o7777
                return f"others can write in {current} (mode {mode:o}, not sticky) and replace what is in it"
    return None


def writable_by_others(info: os.stat_result, path: str | Path | None = None) -> bool:
    """Write permission for anyone but the owner: others, or a group with someone else in it. The
    owner's own private group (Debian's and Ubuntu's user-private groups, whose umask 002 makes a
    user's folders group-writable) and root's group count as the owner. With `path` (not followed), a
    POSIX ACL counts too: its group bits are then the ACL's mask, and a named user may write."""
    if info.st_mode & 0o002:
        return True
    if not info.st_mode & 0o020:
        return False
    return (path is not None and _has_access_acl(path)) or not _private_group(info.st_gid, info.st_uid)


def _has_access_acl(path: str | Path) -> bool:
    try:
        os.getxattr(path, "system.posix_acl_access", follow_symlinks=False)
    except OSError:  # none (ENODATA), or a filesystem without ACLs
        return False
    return True


def _private_group(gid: int, uid: int) -> bool:
    if gid == 0:
        return True
    try:
        group, owner = grp.getgrgid(gid), pwd.getpwuid(uid)
    except KeyError:  # a number with no name: nothing says who is in it
        return False
    return owner.pw_gid == gid and group.gr_name == owner.pw_name and set(group.gr_mem) <= {owner.pw_name}


def shared_with_others(directory: str | Path) -> str | None:
    """Why someone other than this user (and root) could put or change a file in `directory`, or None:
    `replaceable_by_others`, or the folder itself writable by others (a sticky bit lets them add
    files too). For folders whose files the worker trusts by name: a model, a prepared output."""
    why = replaceable_by_others(directory)
    if why is not None:
        return why
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return None
    if writable_by_others(info, os.path.realpath(directory)):
        return f"others can write in {directory} (mode {info.st_mode & 0o7777:o})"
    return None
