"""`bench --wav-dir DIR`: the folder the worker writes the /synth wavs in, made when it does not exist
yet (it was refused: `cannot write in --wav-dir DIR: No such file or directory`, and the caller made it by
hand). Made as `mkdir -p` does, readable by its user only, and never through a link: `mkdir` does not
follow one left at a missing folder's name (dangling, as one planted in /tmp would be), and one another
user owns is refused, as is a path that is there and no folder, and a folder another user owns or can
write in (not sticky), or reached through one: they could swap the wavs whose onsets are measured."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from collections.abc import Awaitable, Callable

from npu_worker.bench.measure import RequestRecord
from npu_worker.other_writers import replaceable_by_others, writable_by_others


def wav_dir_problem(path: str) -> str | None:
    """What keeps the bench from writing in `path` (made first where missing), or None."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        link = None
    except OSError as exc:
        return f"cannot write in --wav-dir {path}: {exc.strerror or exc}"
    if link is not None and stat.S_ISLNK(link.st_mode) and link.st_uid not in (os.geteuid(), 0):
        return f"--wav-dir {path} is a link another user (uid {link.st_uid}) owns: give a folder of your own"
    if (why := _others_can_replace(path)) is not None:  # before making it: nothing left in their folder
        return f"--wav-dir {path}: {why}: give a folder of your own (it is made where missing)"
    try:
        if link is None:
            os.makedirs(path, mode=0o700)
        elif not os.path.isdir(path):
            what = (
                "a link to nothing"
                if stat.S_ISLNK(link.st_mode) and not os.path.exists(path)
                else "no folder"
            )
            return f"--wav-dir {path} is {what}: give a folder (it is made where missing)"
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return f"cannot write in --wav-dir {path}: {exc.strerror or exc}"
    return None


def _others_can_replace(path: str) -> str | None:
    """Why another user could swap the wavs the bench measures (a 0777 `/tmp/wavs` planted, or their
    folder), or None: `replaceable_by_others`, or the folder itself writable by others and not sticky."""
    if (why := replaceable_by_others(path)) is not None:
        return why
    try:
        info = os.stat(path)
    except OSError:  # missing (made, the user's own), or no folder: said by the caller
        return None
    if (
        stat.S_ISDIR(info.st_mode)
        and writable_by_others(info, os.path.realpath(path))
        and not info.st_mode & stat.S_ISVTX
    ):
        return f"others can write in it (mode {info.st_mode & 0o7777:o}, not sticky)"
    return None


def temp_wav_dir(wav_dir: str | None) -> str:
    """A fresh folder for the /synth wavs, as an absolute path: the worker would read a relative one
    from its own folder (blocking: call from a thread)."""
    return os.path.abspath(tempfile.mkdtemp(prefix="npu-bench-", dir=wav_dir))


def wav_dir_hint(batch: list[RequestRecord], out_dir: str) -> str | None:
    """What to do when the worker refused the folder of the /synth wavs: its own message tells its
    operator to widen --output-roots, which a caller of the benchmark may not be."""
    if not any((r.error or "").startswith("OutputPathNotAllowed") for r in batch):
        return None
    return (
        f"the worker does not allow writing the /synth wavs in {out_dir}: give --wav-dir a folder"
        " inside the worker's --output-roots"
    )


WAV_SETTLE_SECONDS = 5.0  # how long a run's end waits for the worker to finish what it gave up on


async def removed_once_settled(out_dir: str, settled: Callable[[], Awaitable[str | None]]) -> str | None:
    """Remove the run's wav folder, and again once the worker is idle (`settled`: None then, else why
    not), at the latest after `WAV_SETTLE_SECONDS`: a /synth the run gave up on (a stop midway, a
    timeout) could still be written after the first removal, and the worker makes an output path's
    folders: the folder was left behind, a wav in it. Returns what the caller is told where the worker
    was not seen idle (the folder may come back: it was a silent leftover). (A worker that answers its
    `/health` ask nothing held the end for the ask's 10 s.)"""
    await asyncio.to_thread(shutil.rmtree, out_dir, True)
    try:
        async with asyncio.timeout(WAV_SETTLE_SECONDS):
            problem = await settled()
    except TimeoutError:
        problem = f"worker still busy after {WAV_SETTLE_SECONDS:g} s"
    await asyncio.to_thread(shutil.rmtree, out_dir, True)
    if problem is None:
        return None
    return f"{problem}: a /synth the run gave up on may still write its wav in {out_dir} (remove it then)"
