"""The stored voices' folders (`<state>/voices`, `voices/inline`), changed through descriptors only.

Looking for a link at a folder's path and then writing by path left a window: a link planted in
between was followed (an upload written, a delete or the inline prune removing files, in whatever
folder the link named). A change opens each folder once without following a link and makes, renames
and removes its files relative to that descriptor, as `files.write_beneath` does for outputs: a link
planted before the open is refused, one planted after it is never seen.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .files import DIRECTORY_FLAGS, LINK_ERRORS, LinkRefused, temp_name
from .folder_lock import holding_folder_lock
from .leftovers import PART_SUFFIX


class VoiceFolder:
    """One open voice folder: its files read, written and removed by name, relative to its descriptor."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path  # for messages and for what the lookups (by path) will find

    def names(self, suffix: str) -> list[str]:
        """The names of its entries ending in `suffix`."""
        return [name for name in os.listdir(self.fd) if name.endswith(suffix)]

    def holds(self, name: str) -> bool:
        """An entry `name` that is no folder (a link counts: it is removed as an entry, never followed)."""
        try:
            return not stat.S_ISDIR(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            return False

    def mtime(self, name: str) -> float:
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mtime

    def touch(self, name: str) -> None:
        """Mark `name` used now (FileNotFoundError when it is gone)."""
        os.utime(name, dir_fd=self.fd, follow_symlinks=False)

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def write(self, name: str, data: bytes) -> None:
        """`name` written whole or not at all: a 0600 temp file, synced, renamed over it."""
        temp = temp_name(name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(temp, flags, 0o600, dir_fd=self.fd)
        try:
            with os.fdopen(out, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            self.remove(temp)
            raise

    def remove_parts(self) -> int:
        """Remove the temp files (`.*.part`, plain files) of writes a `kill -9` cut; how many went."""
        removed = 0
        for name in self.names(PART_SUFFIX):
            try:
                info = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
                if name.startswith(".") and stat.S_ISREG(info.st_mode):
                    os.unlink(name, dir_fd=self.fd)
                    removed += 1
            except FileNotFoundError:
                pass
        return removed

    @contextlib.contextmanager
    def sub(self, name: str, *, create: bool) -> Iterator[VoiceFolder | None]:
        """The folder `name` inside this one, opened without following a link (made if `create`; None
        when absent and not made). LinkRefused when it is a link."""
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o750, dir_fd=self.fd)
        try:
            fd = _open_folder(name, self.fd)
        except FileNotFoundError:
            if create:
                raise
            yield None
            return
        try:
            yield VoiceFolder(fd, self.path / name)
        finally:
            os.close(fd)


def holds_own_file(folder: Path, *names: str) -> bool:
    """Whether `folder/names...` is a regular file, reached without following a link at `folder` or
    below: a lookup sees what a change would write (a linked `voices/inline` named another folder's
    files as the worker's inline voices)."""
    try:
        fd = _open_folder(folder)
    except OSError:
        return False
    try:
        for name in names[:-1]:
            inner = _open_folder(name, fd)
            os.close(fd)
            fd = inner
        return stat.S_ISREG(os.stat(names[-1], dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
    finally:
        os.close(fd)


def _open_folder(name: str | Path, dir_fd: int | None = None) -> int:
    try:
        return os.open(name, DIRECTORY_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in LINK_ERRORS and stat.S_ISLNK(
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        ):
            raise LinkRefused(exc.errno, f"{name} is a symbolic link") from None
        raise


@contextlib.contextmanager
def changing_folder(path: Path) -> Iterator[VoiceFolder]:
    """The folder at `path` (made 0750 with its parents if missing, opened without following a link at
    its name, made unwritable by others if it is ours) under its lock (`folder_lock.py`: a 0600 file
    inside, not the folder, which its group could open and hold, so every change waited for ever): one
    change at a time across threads and the workers that share it (`locked_directory` takes the same).
    LinkRefused when it is a symbolic link; another OSError when it cannot be made or opened."""
    path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o750)
    fd = _open_folder(path)
    try:
        info = os.fstat(fd)
        if info.st_uid == os.geteuid() and info.st_mode & 0o022:  # a `UMask=0007` service made it so
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & ~0o022)
        with holding_folder_lock(fd):
            yield VoiceFolder(fd, path)
    finally:
        os.close(fd)
