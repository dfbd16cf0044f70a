"""Who but its owner may read a file: by the mode bits of the file and of every folder on its way, as
the kernel checks them for each local user (owner, group, or other class; POSIX ACLs are not read).
A group-readable token file in a folder that only its group may enter (0750) was passed as private,
though every member of that group could read it."""

from __future__ import annotations

import grp
import os
import pwd
import stat

EVERYONE = "every local user"


def other_readers(path: str) -> list[str]:
    """The users besides the file's owner, root and this process's who may open `path` to read it:
    [EVERYONE] when a user in none of its groups may (a user the system does not list among its
    accounts, as one from a directory service, included), else their names; [] when none may."""
    real = os.path.realpath(path)
    info = os.stat(real)
    folders = [] if info.st_nlink > 1 else _folders_above(real)  # another name elsewhere: its bits alone
    if folders is None:
        return []  # a folder on the way could not be read: `read_token_file` says what is wrong
    if _may(info, stat.S_IROTH, set()) and all(_may(f, stat.S_IXOTH, set()) for f in folders):
        return [EVERYONE]
    mine = {info.st_uid, os.geteuid(), 0}
    members = _group_members()
    names = []
    for user in pwd.getpwall():
        if user.pw_uid in mine:
            continue
        groups = {user.pw_gid, *(gid for gid, names_in in members.items() if user.pw_name in names_in)}
        if _may(info, stat.S_IROTH, groups, user.pw_uid) and all(
            _may(f, stat.S_IXOTH, groups, user.pw_uid) for f in folders
        ):
            names.append(user.pw_name)
    return names


def _folders_above(real: str) -> list[os.stat_result] | None:
    """The stat of every folder from `real`'s own up to `/`; None if one cannot be read."""
    found = []
    folder = os.path.dirname(real)
    while True:
        try:
            found.append(os.stat(folder))
        except OSError:
            return None
        parent = os.path.dirname(folder)
        if parent == folder:
            return found
        folder = parent


def _group_members() -> dict[int, set[str]]:
    return {group.gr_gid: set(group.gr_mem) for group in grp.getgrall()}


def _may(info: os.stat_result, other_bit: int, groups: set[int], uid: int = -1) -> bool:
    """Whether a user (`uid`, in `groups`) has `other_bit`'s permission (read or pass through) here: the
    owner's bit for the owner, the group's for a member, else the others' (as the kernel picks one)."""
    if info.st_uid == uid:
        return bool(info.st_mode & (other_bit << 6))
    if info.st_gid in groups:
        return bool(info.st_mode & (other_bit << 3))
    return bool(info.st_mode & other_bit)
