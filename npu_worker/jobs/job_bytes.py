"""The byte bound of what jobs keep in the state dir (`--jobs-max-bytes`): each job's record and log
(`<state>/jobs/<id>/`) and its default outputs (`<state>/outputs/<id>/sNN.wav`).

Why: both are kept with their job for `--job-retention` or `--max-jobs-kept`, and both are far larger
than what a caller pays to make them: a 51 KB batch of Korean text wrote 121 MiB of default outputs,
and a 5 MB batch cancelled at once left its 5 MB record (1 000 such jobs: 5 GB), so any caller could fill
the state dir's disk, and then every later batch and section failed. Each record and default output
is counted here before it is written: when it would pass the bound, the oldest finished jobs are
removed first (`make_room`, retention's eviction); a running job's files never are, so when running
jobs alone would pass it, the write is refused (a section's `WriteFailed`, a batch's 503
`StateUnavailable`) and nothing else is removed. A log is counted when its job ends (its lines, a few
hundred bytes each, are not counted one by one).

What is held is counted once at start-up (one listing per job folder), then kept up to date at every
write and every removal: no walk of the tree per section. Sizes are the files' bytes (`st_size`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator

from ..paths import spelled_under
from ..protocol import WriteFailed

log = logging.getLogger(__name__)


class JobBytes:
    """Bytes held in the job folders under `roots` (`<state>/jobs`, `<state>/outputs`), by job and
    file, against `max_bytes` (0: no bound). A job's folder has the job's id for its name.

    `make_room(need)` is how room is made (retention removes finished jobs, oldest first, and calls
    `recount_job` for each): it removes nothing when the finished jobs together could not free `need`."""

    def __init__(self, roots: Iterable[str], max_bytes: int) -> None:
        self.roots = tuple(roots)
        self.max_bytes = max_bytes
        self.make_room: Callable[[int], object] = lambda need: None
        self._lock = threading.Lock()
        # One write at a time counts and makes room (a writer and an engine thread on a Redis queue): a
        # second would see the first's removals not yet counted and fail, or remove more than needed.
        self._room = threading.Lock()
        self._files: dict[str, dict[str, int]] = {}  # job id → {file path → bytes}
        self._total = 0

    @property
    def total(self) -> int:
        return self._total

    def held_by(self, job_id: str) -> int:
        with self._lock:
            return sum(self._files.get(job_id, {}).values())

    def oldest_freeing(self, job_ids: Iterable[str], need: int) -> list[str]:
        """The first of `job_ids` (finished jobs, oldest first) that hold bytes, as few as free `need`
        bytes together; none when all of them together hold less (removing them would not make room).
        Both retentions' `make_room` choose with it, each over its own listing."""
        chosen: list[str] = []
        freed = 0
        for job_id in job_ids:
            held = self.held_by(job_id)
            if held:
                chosen.append(job_id)
                freed += held
                if freed >= need:
                    return chosen
        return []

    def job_ids(self) -> list[str]:
        """The jobs whose folders hold bytes now."""
        with self._lock:
            return list(self._files)

    def uncount(self, job_ids: Iterable[str]) -> int:
        """Stop counting these jobs' folders, files of no job the worker keeps (a folder left by hand, a
        damaged job skipped at start, a copy, the other queue's jobs on a state dir that changed queue):
        the worker never removes them, so counted they held their bytes of the bound for good, and once
        they filled it every batch and section was refused. Their bytes (logged)."""
        with self._lock:
            gone = sum(sum(self._files.pop(job_id, {}).values()) for job_id in set(job_ids))
            self._total -= gone
        if gone:
            log.warning(
                "%d bytes in %s belong to no job this worker keeps: not counted against --jobs-max-bytes "
                "and never removed by the worker (remove them by hand once they are not needed)",
                gone,
                " and ".join(self.roots),
            )
        return gone

    def covers(self, path: str) -> bool:
        """A job's own file (a caller's `output_path` is the caller's disk), by spelling: the worker
        names its own so, and a caller's folder swapped for a link into the job folders (its write then
        refused) had its bytes counted, finished jobs removed to make room for them."""
        return any(spelled_under(path, root) for root in self.roots)

    def recount(self) -> int:
        """Count what the job folders hold (start-up: one listing per job folder)."""
        files: dict[str, dict[str, int]] = {}
        for root in self.roots:
            with contextlib.suppress(FileNotFoundError), os.scandir(root) as folders:
                for folder in folders:
                    if folder.is_dir(follow_symlinks=False):
                        files.setdefault(folder.name, {}).update(_sizes_in(folder.path))
        with self._lock:
            self._files = {job_id: sizes for job_id, sizes in files.items() if sizes}
            self._total = sum(sum(sizes.values()) for sizes in self._files.values())
            return self._total

    def recount_job(self, job_id: str) -> None:
        """A job's folders counted again (after retention removed them: nothing, unless a file stayed)."""
        sizes: dict[str, int] = {}
        for root in self.roots:
            sizes.update(_sizes_in(os.path.join(root, job_id)))
        with self._lock:
            self._total += sum(sizes.values()) - sum(self._files.pop(job_id, {}).values())
            if sizes:
                self._files[job_id] = sizes

    def count_file(self, job_id: str, path: str) -> None:
        """A file of the job as it is now (a log once its job has ended; gone: nothing)."""
        try:
            size = os.stat(path, follow_symlinks=False).st_size
        except OSError:
            size = 0
        with self._lock:
            self._set_locked(job_id, path, size)

    @contextlib.contextmanager
    def writing(self, job_id: str, path: str, size: int) -> Iterator[None]:
        """Count `size` bytes for `path` (replacing what it held) while it is written; WriteFailed when
        they do not fit even once every finished job is gone. A write that fails is uncounted."""
        if not self.covers(path):
            yield
            return
        with self._room:
            previous = self._reserve(job_id, path, size)
        try:
            yield
        except BaseException:
            with self._lock:  # the atomic write left the previous file as it was
                self._set_locked(job_id, path, previous)
            raise

    def _reserve(self, job_id: str, path: str, size: int) -> int:
        with self._lock:
            previous = self._files.get(job_id, {}).get(path, 0)
            need = self._total - previous + size - self.max_bytes
        if self.max_bytes > 0 and need > 0:
            self.make_room(need)  # its removals are counted (`recount_job`) before it returns
        with self._lock:
            previous = self._files.get(job_id, {}).get(path, 0)
            over = self._total - previous + size - self.max_bytes
            if self.max_bytes > 0 and over > 0:
                raise WriteFailed(
                    f"{path}: the state dir's jobs would pass --jobs-max-bytes ({self.max_bytes} bytes; "
                    f"{self._total} held by running jobs and by what retention cannot remove, this file "
                    f"{size}); retry once running jobs end, give the sections an output_path, or ask "
                    "the operator for a larger bound"
                )
            self._set_locked(job_id, path, size)
        return previous

    def _set_locked(self, job_id: str, path: str, size: int) -> None:
        sizes = self._files.setdefault(job_id, {})
        self._total += size - sizes.get(path, 0)
        if size:
            sizes[path] = size
        else:
            sizes.pop(path, None)
        if not sizes:
            del self._files[job_id]


def _sizes_in(folder: str) -> dict[str, int]:
    """The bytes of each plain file in `folder` (a temp file a crash left too: it is on the disk); none
    in a folder that is a link (no job's: what it points to was counted for good, never freed)."""
    sizes: dict[str, int] = {}
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:  # gone, a link (ELOOP, ENOTDIR), or unreadable
        return sizes
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):  # removed meanwhile
                    if entry.is_file(follow_symlinks=False):
                        sizes[os.path.join(folder, entry.name)] = entry.stat(follow_symlinks=False).st_size
    finally:
        os.close(fd)
    return sizes
