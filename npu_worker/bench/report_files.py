"""The bench's report files, written without following a link planted where they go.

`--out` may name a shared folder (`/tmp/run`): a plain open follows a symbolic link another user put at
`/tmp/run.json` and writes the report into whatever file it points at, one of the caller's own. Each
file is written to a fresh file beside it (created, never opened through a link) and renamed over the
name: a link there is replaced, not followed."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import secrets
from pathlib import Path

from npu_worker.cli_flag_values import home_path
from npu_worker.other_writers import replaceable_by_others


def write_file(path: Path, data: bytes) -> None:
    """`data` as the file at `path` (mode as the umask allows), whatever was at that name before."""
    # its name cut (32 characters, at most 128 bytes): a 240-byte one plus 19 was past NAME_MAX
    temp = path.with_name(f".{path.name[:32]}.{secrets.token_hex(6)}.part")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def someone_elses(path: Path) -> bool:
    """Whether the name holds an entry (a file, or a link: not followed) of another user: renamed over
    in a sticky folder, it is refused (EPERM), so say so before the run rather than after it."""
    try:
        return os.lstat(path).st_uid != os.geteuid()
    except FileNotFoundError:
        return False


def check_folder_ours(folder: Path) -> None:
    """PermissionError where another user owns or could re-point `folder` (their link to a folder of
    ours: the reports replaced our files there)."""
    if (why := replaceable_by_others(folder)) is not None:
        raise PermissionError(errno.EACCES, f"{why}: give a folder of your own", str(folder))


def check_not_someone_elses(path: Path) -> None:
    """PermissionError where another user owns the entry at `path` (see `someone_elses`)."""
    if someone_elses(path):
        raise PermissionError(errno.EACCES, "belongs to another user: not written over", str(path))


def check_ours(prefix: Path, suffixes: tuple[str, ...]) -> None:
    """`check_folder_ours` for the folder of PREFIX.*, then `check_not_someone_elses` for each file:
    the rule `bench` checks before its run (`cli.check_writable`), for a rerender too."""
    check_folder_ours(prefix.parent)
    for suffix in suffixes:
        check_not_someone_elses(Path(f"{prefix}{suffix}"))


def output_prefix(text: str) -> Path:
    """`--out PREFIX` as a Path; argparse's refusal, in these words, for a folder, `DIR/`, `.`, `..` or
    one that exists (or a link to one): the reports went beside it, `--out runs/` or `--out runs`
    writing `runs.json`, and `--out .` the hidden `..json`."""
    if not text:  # it was called a folder
        raise argparse.ArgumentTypeError(
            "'' is empty: --out takes a prefix of files, as DIR/run for DIR/run.json"
        )
    folder = text.rstrip("/") or "DIR"
    prefix = home_path(text)
    # an existing folder (or a link to one) named without its `/`: `--out runs` wrote runs.json beside it
    if text.endswith("/") or folder.rsplit("/", 1)[-1] in (".", "..") or prefix.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text!r} is a folder: --out takes a prefix of files, as {folder}/run for {folder}/run.json"
        )
    return prefix
