"""The byte bound of the default outputs (`<state>/outputs/<job>/sNN.wav`): `--outputs-max-bytes`.

Why: a section without `output_path` is written into the state dir and kept with its job, and the
audio is far larger than its text (a 51 KB batch of Korean text wrote 121 MiB), so any caller could
fill the state dir's disk, and then every later section failed. Each write is counted here before it
is made: when it would pass the bound, the oldest finished jobs that hold outputs are removed first
(`make_room`, retention's eviction); a running job's outputs never are, so when running jobs alone
would pass it, the section fails (`WriteFailed`) and nothing else is removed.

What is held is counted once at start-up (one listing per job folder), then kept up to date at every
write and every removal: no walk of the tree per section. Sizes are the files' bytes (`st_size`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator

from ..paths import is_under
from ..protocol import WriteFailed

log = logging.getLogger(__name__)


class OutputsBudget:
    """Bytes held under the outputs folder, by job and file, against `max_bytes` (0: no bound).

    `make_room(job_id, need)` is how room is made (retention removes finished jobs, oldest first,
    and calls `recount_job` for each): it returns without removing anything when the finished jobs
    together could not free `need` bytes."""

    def __init__(self, root: str, max_bytes: int) -> None:
        self.root = root
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

    def held_by_unknown(self, known: Iterable[str]) -> int:
        """Bytes in folders of no job in `known` (a folder left by hand, or a copy from elsewhere)."""
        known = set(known)
        with self._lock:
            return sum(sum(sizes.values()) for job_id, sizes in self._files.items() if job_id not in known)

    def covers(self, path: str) -> bool:
        """A default output: `<root>/<job>/<file>` (a caller's `output_path` is the caller's disk)."""
        return is_under(path, (self.root,))

    def recount(self) -> int:
        """Count what the outputs folder holds (start-up: one listing per job folder)."""
        files: dict[str, dict[str, int]] = {}
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root) as folders:
            for folder in folders:
                if folder.is_dir(follow_symlinks=False):
                    files[folder.name] = _sizes_in(folder.path)
        with self._lock:
            self._files = {job_id: sizes for job_id, sizes in files.items() if sizes}
            self._total = sum(sum(sizes.values()) for sizes in self._files.values())
            return self._total

    def recount_job(self, job_id: str) -> None:
        """A job's folder counted again (after retention removed it: nothing, unless a file stayed)."""
        sizes = _sizes_in(os.path.join(self.root, job_id))
        with self._lock:
            self._total += sum(sizes.values()) - sum(self._files.pop(job_id, {}).values())
            if sizes:
                self._files[job_id] = sizes

    @contextlib.contextmanager
    def writing(self, job_id: str, path: str, size: int) -> Iterator[None]:
        """Count `size` bytes for `path` (replacing what it held) while it is written; WriteFailed when
        they do not fit even once every finished job's outputs are gone. A write that fails is uncounted."""
        if not self.covers(path):
            yield
            return
        previous = self._reserve(job_id, path, size)
        try:
            yield
        except BaseException:
            self._set(job_id, path, previous)  # the atomic write left the previous file as it was
            raise

    def _reserve(self, job_id: str, path: str, size: int) -> int:
        with self._room:
            return self._reserve_alone(job_id, path, size)

    def _reserve_alone(self, job_id: str, path: str, size: int) -> int:
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
                    f"{path}: the default outputs would pass --outputs-max-bytes ({self.max_bytes} bytes; "
                    f"{self._total} held by running jobs and by what retention cannot remove, this section "
                    f"{size}); give this section an output_path, retry once running jobs end, or ask "
                    "the operator for a larger bound"
                )
            self._set_locked(job_id, path, size)
        return previous

    def _set(self, job_id: str, path: str, size: int) -> None:
        with self._lock:
            self._set_locked(job_id, path, size)

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
    """The bytes of each plain file in `folder` (a temp file a crash left too: it is on the disk)."""
    sizes: dict[str, int] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):  # removed meanwhile
                    if entry.is_file(follow_symlinks=False):
                        sizes[entry.path] = entry.stat(follow_symlinks=False).st_size
    except (FileNotFoundError, NotADirectoryError):
        pass
    return sizes
