"""Who but its owner may read a file: by the mode bits of the file and of every folder on its way, as
the kernel checks them for each local user (owner, group, or other class), and by the file's own POSIX
ACL (`acl_readers`: its named users and groups that may read; the folders' ACLs are not read). A
group-readable token file in a folder that only its group may enter (0750) was passed as private, though
every member of that group could read it; so was a 0600 file that `setfacl -m u:bob:r` opened to bob.
No account is looked up for a file only its owner's bits let read: all users and groups were listed
for each (getpwall, getgrall), and a slow or unreachable directory service hung the command's start."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import stat
import struct

EVERYONE = "every local user"


def other_readers(path: str) -> list[str]:
    """The users besides the file's owner, root and this process's who may open `path` to read it:
    [EVERYONE] when a user in none of its groups may (a user the system does not list among its
    accounts, as one from a directory service, included), else their names; [] when none may."""
    real = os.path.realpath(path)
    info = os.stat(real)
    if not info.st_mode & (stat.S_IRGRP | stat.S_IROTH):
        return []  # its owner's bits alone let read (600): no account is looked up, as a slow NSS would be
    info = _owning_group_bits(info, _acl_entries(real))
    folders = [] if info.st_nlink > 1 else _folders_above(real)  # another name elsewhere: its bits alone
    if folders is None:
        return []  # a folder on the way could not be read: `read_token_file` says what is wrong
    if _may(info, stat.S_IROTH, set()) and all(_may(f, stat.S_IXOTH, set()) for f in folders):
        return [EVERYONE]
    mine = {info.st_uid, os.geteuid(), 0}
    members = _group_members({info.st_gid, *(folder.st_gid for folder in folders)})
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


def _group_members(gids: set[int]) -> dict[int, set[str]]:
    """The listed members of the groups that own the file or a folder on its way (the only groups whose
    bits the kernel reads here): each looked up by its id, not every group of a directory service."""
    members = {}
    for gid in gids:
        with contextlib.suppress(KeyError):
            members[gid] = set(grp.getgrgid(gid).gr_mem)
    return members


def _may(info: os.stat_result, other_bit: int, groups: set[int], uid: int = -1) -> bool:
    """Whether a user (`uid`, in `groups`) has `other_bit`'s permission (read or pass through) here: the
    owner's bit for the owner, the group's for a member, else the others' (as the kernel picks one)."""
    if info.st_uid == uid:
        return bool(info.st_mode & (other_bit << 6))
    if info.st_gid in groups:
        return bool(info.st_mode & (other_bit << 3))
    return bool(info.st_mode & other_bit)


_ACL_XATTR = "system.posix_acl_access"  # the file's access ACL, in the kernel's binary form
_ACL_VERSION = 2
_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10  # named user, named group, the mask over both
_ACL_GROUP_OBJ = 0x04  # the owning group's entry
_ACL_READ = 0x04
_ACL_ENTRY = struct.Struct("<HHI")  # tag, permissions, id


def acl_readers(path: str) -> list[str]:
    """The named users and groups (`user NAME`, `group NAME`) the file's POSIX ACL lets read it, its
    mask permitting; [] without an ACL, or where the system has none (a folder's ACL is not read)."""
    entries = _acl_entries(path)
    if any(tag == _ACL_MASK and not perm & _ACL_READ for tag, perm, _ in entries):
        return []
    named = []
    for tag, perm, ident in entries:
        if tag == _ACL_USER and perm & _ACL_READ and ident not in (os.geteuid(), 0):
            named.append(f"user {_user_name(ident)}")
        elif tag == _ACL_GROUP and perm & _ACL_READ:
            named.append(f"group {_group_name(ident)}")
    return named


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _acl_entries(path: str) -> list[tuple[int, int, int]]:
    """The (tag, permissions, id) entries of the file's access ACL; [] without one."""
    try:
        blob = os.getxattr(path, _ACL_XATTR)
    except (OSError, AttributeError):  # no ACL, no xattrs here, or not Linux
        return []
    if len(blob) < 4 or struct.unpack_from("<I", blob)[0] != _ACL_VERSION:
        return []
    return [_ACL_ENTRY.unpack_from(blob, at) for at in range(4, len(blob) - 7, _ACL_ENTRY.size)]


def _owning_group_bits(info: os.stat_result, entries: list[tuple[int, int, int]]) -> os.stat_result:
    """`info` with the owning group's own permissions as its group bits: with an ACL, the mode's group
    bits are its mask (`setfacl -m u:bob:r` on a 600 file shows 640), and the owning group's members
    were named as readers though its entry gave them nothing (and the named bob was not said)."""
    owning = next((perm for tag, perm, _ in entries if tag == _ACL_GROUP_OBJ), None)
    if owning is None:
        return info
    mask = next((perm for tag, perm, _ in entries if tag == _ACL_MASK), 0o7)
    mode = info.st_mode & ~0o070 | (owning & mask) << 3
    return os.stat_result((mode, *tuple(info)[1:]))
