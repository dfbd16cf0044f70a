"""A replaced file's last close, on a thread of its own rather than the writer's.

Why: renaming a new wav over the one it replaces drops that file's last name, and the kernel frees its
blocks within the rename, on the thread that must then log the section's `ok`: on this VM's ext4 0.5 ms
at the median, 3–4 ms at p95 and up to 30 ms, which a `/synth` caller waited for (benchmarks/
SERVER_OVERHEAD.md, 2026-12-08, stop 64). The writer holds the replaced file by an `O_PATH` descriptor
across the rename (`files.write_beneath`), so the freeing happens at that descriptor's close, done here
after the new file is in place: what a reader of the path sees is the same, the old file's space comes
back a moment later.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import threading
from collections.abc import Callable

HOLD_FLAGS = getattr(os, "O_PATH", os.O_RDONLY | os.O_NONBLOCK) | os.O_NOFOLLOW | os.O_CLOEXEC
MOST_WAITING = 64  # descriptors waiting at most: past them a close is made at once, on the writer's thread
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)


class LateCloses:
    """Descriptors closed in the order handed over, on a daemon thread started at the first one
    (`start_at_first=False`: at `start`, so a test can see what a writer left to it)."""

    def __init__(self, most_waiting: int = MOST_WAITING, *, start_at_first: bool = True) -> None:
        self._most = most_waiting
        self._start_at_first = start_at_first
        self._start_over()
        os.register_at_fork(after_in_child=self._in_forked_child)

    def _start_over(self) -> None:
        self._waiting: queue.Queue[int] = queue.Queue()
        self._lock = threading.Lock()  # one thread started, however many writers hand over at once
        self._thread: threading.Thread | None = None

    def _in_forked_child(self) -> None:
        """A forked child has no closing thread (what it handed over waited for ever, holding the replaced
        files' blocks), and the queue's lock may have been held at the fork: the descriptors waiting, the
        parent's copied here, closed now; a fresh queue, its thread started at the child's first."""
        waiting = list(self._waiting.queue)  # (the child's one thread: nothing else reads it)
        self._start_over()
        for fd in waiting:
            _close_quietly(fd)

    def close(self, fd: int) -> None:
        """`fd` closed on this object's thread; at once here where `most_waiting` already wait (a disk
        that slow holds its writers back, as before, rather than descriptors piling up)."""
        if self._waiting.unfinished_tasks >= self._most:
            _close_quietly(fd)
            return
        self._waiting.put(fd)
        if self._thread is None and self._start_at_first:
            try:
                self.start()
            except RuntimeError:  # no thread to be had (a process limit): closed here, the wav written
                self.close_waiting_here()

    def start(self) -> None:
        """The closing thread, once (tried again at the next close where the system had none to give)."""
        with self._lock:
            if self._thread is None:
                thread = threading.Thread(target=self._work, name="npu-worker-late-close", daemon=True)
                thread.start()
                self._thread = thread

    @property
    def waiting(self) -> int:
        """Descriptors handed over and not closed yet."""
        return self._waiting.unfinished_tasks

    def settle(self) -> None:
        """Until every descriptor handed over so far is closed."""
        self._waiting.join()

    def with_room(self, write: Callable[[], None]) -> None:
        """`write()`, once more where it found no room and replaced files still waited here, closed first on
        this thread: their blocks are room a full disk needs (a section's wav failed `No space left on
        device`, or the synthesis cache gave its entries up, while an unnamed old wav held them)."""
        try:
            write()
        except OSError as exc:
            if exc.errno not in NO_ROOM or not self.close_waiting_here():
                raise
            write()

    def close_waiting_here(self) -> int:
        """Every descriptor still waiting, closed now on the calling thread; how many."""
        closed = 0
        while True:
            try:
                fd = self._waiting.get_nowait()
            except queue.Empty:
                return closed
            try:
                _close_quietly(fd)
            finally:
                self._waiting.task_done()
            closed += 1

    def _work(self) -> None:
        while True:
            fd = self._waiting.get()
            try:
                _close_quietly(fd)
            finally:
                self._waiting.task_done()


def hold(dir_fd: int, name: str) -> int | None:
    """What is at `name` in `dir_fd` now, held by an `O_PATH` descriptor (no link followed, no open that
    can block, no permission needed); None where nothing is held: the rename then frees it, as before."""
    try:
        return os.open(name, HOLD_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def _close_quietly(fd: int) -> None:
    """A close whose failure changes nothing for anyone: the descriptor is gone either way."""
    with contextlib.suppress(OSError):
        os.close(fd)


LATE_CLOSES = LateCloses()  # the process's one: every output write hands its replaced file here
