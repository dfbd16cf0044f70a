"""A caller's path resolved as realpath resolves it, except through a link another user planted in a
world-writable folder.

At admission `paths.py` resolved a caller's path with os.path.realpath, which follows every link. A
link that another local user put in a world-writable folder (`/tmp`, a shared output folder) could
thus point the worker's write at another of the worker's own files under the roots (another caller's
lecture, a voice), which it then replaced, or its read at one. The kernel refuses such links to every
process (fs.protected_symlinks), but realpath never opens them, so it never asked; and many containers
turn the setting off. The walk below resolves the path as realpath does and applies the kernel's rule
to each link on the way: in a world-writable folder a link is followed only when it is the worker's
own or the folder owner's. The kernel asks it in sticky folders only; in one that is not sticky anyone
may put a link there just as well (and replace the others), so the rule holds there too. One level
down too: in a folder another user made in a world-writable one (`/tmp/shared/lecture/`, made before
the caller's first write there) a link not the worker's own is refused, wherever it lies beneath; the
kernel's rule, which asks only the link's own folder, let that user's link through.
"""

from __future__ import annotations

import os
import stat

MAX_LINKS = 40  # as the kernel's: past it an open fails (ELOOP), so the path is refused (a loop too)


class UnfollowedLink(Exception):
    """A link on the path the walk does not follow; the message begins "goes through" and says which."""


class PlantedLink(UnfollowedLink):
    """The path goes through a link another user put in a world-writable folder (the message says which)."""


class TooManyLinks(UnfollowedLink):
    """The path goes through more links than the system follows in one path (a loop, or a long chain)."""


def resolve_unplanted(path: str) -> str:
    """The real path of the absolute `path`, as os.path.realpath resolves it (parts that do not exist
    are taken as written), or PlantedLink, or TooManyLinks. One walk both resolves and checks: a link
    planted between a check and a second resolution would have been followed unasked."""
    me = os.geteuid()
    pending = parts_reversed(path)  # the next part last: each taken in O(1), whatever a link adds
    done = "/"
    planted: tuple[str, int] | None = None  # the folder on `done` another user made in a shared one
    done_info: os.stat_result | None = None  # lstat of `done` where the walk already has it
    links = 0
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            done, done_info = os.path.dirname(done), None
            if planted is not None and not is_within(done, planted[0]):
                planted = None
            continue
        current = os.path.join(done, part)
        try:
            info = os.lstat(current)
        except OSError:  # not there (or not a folder above it): taken as written
            done, done_info = current, None
            continue
        try:  # `done` holds no link: every one on it was followed
            folder = done_info if done_info is not None else os.lstat(done)
        except OSError:  # removed since: taken as written (the write, which follows no link, says why)
            done, done_info = current, None
            continue
        shared = bool(folder.st_mode & stat.S_IWOTH)
        if not stat.S_ISLNK(info.st_mode):
            if planted is None and shared and info.st_uid not in (me, folder.st_uid):
                planted = (current, info.st_uid)  # whatever it holds, that user put there
            done, done_info = current, info
            continue
        if info.st_uid != me:
            check_link(current, info.st_uid, done, folder.st_uid if shared else None, planted)
        links += 1
        if links > MAX_LINKS:  # what was left unresolved held links, which the write then refused
            raise TooManyLinks(f"goes through more than {MAX_LINKS} links (a loop, or the system's limit)")
        try:
            target = os.readlink(current)
        except OSError:  # gone since: taken as written
            done, done_info = current, None
            continue
        pending.extend(parts_reversed(target))
        if target.startswith("/"):
            done, done_info, planted = "/", None, None
    return done


def check_link(
    link: str, owner: int, folder: str, shared_by: int | None, planted: tuple[str, int] | None
) -> None:
    """PlantedLink where another user's `link` could have been put there by someone else than the
    worker: in a world-writable `folder` (owned by `shared_by`) by anyone but its owner (the kernel's
    rule), or anywhere beneath a folder another user made in a world-writable one (`planted`: a folder
    the caller's path expected to find or to have made, one level down from the kernel's rule)."""
    if planted is not None:
        raise PlantedLink(
            f"goes through {link}, a link in {planted[0]}, a folder that user {planted[1]} made in a world-writable folder"
        )
    if shared_by is not None and owner != shared_by:
        raise PlantedLink(
            f"goes through {link}, a link that another user (uid {owner}) put in the world-writable folder {folder}"
        )


def is_within(path: str, folder: str) -> bool:
    """`path` is `folder` or lies beneath it (both real, normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def parts_reversed(path: str) -> list[str]:
    """The components of `path`, last first (a stack: popping the first part of a list moved the rest,
    and a chain of 40 links of 2 000 parts each held a thread 1.2 s, realpath 0.04 s)."""
    return [part for part in reversed(path.split("/")) if part]
