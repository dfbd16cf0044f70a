"""Where a job's `seq` goes on after a restart that may have lost events a caller already read.

A log keeps every event a caller saw, unless the disk refused its line (the event was published all the
same, `journal.py`) and the worker then stopped before there was room again. The restart would number
the next events from the last line it finds, reusing seqs a caller read: re-attaching with `after=N`
would skip a section's `ok` and show another twice. So such a restart jumps: by `SEQ_JUMP` past the last
line, and at least to the wall clock counted in `RESTART_TICK`s, since a worker that crashes again
before its first line is written would otherwise jump to the same place twice. The Redis journal jumps
the same way after Redis lost its last writes (`cluster/lua_functions.py`).
"""

from __future__ import annotations

import logging
import os
import stat
import time
from pathlib import Path

log = logging.getLogger(__name__)

SEQ_JUMP = 1_000_000  # more events than a job has (its sections are bounded), far below a seq's 15 digits
RESTART_TICK = 0.00001  # 10 µs: now is 1.8e14 ticks, a seq of 15 digits until the year 5000


def jumped_next_seq(last_seq: int, now: float | None = None) -> int:
    """The next seq of a log whose last line is `last_seq` (0: none) when later ones may have been seen."""
    ticks = int((time.time() if now is None else now) / RESTART_TICK)
    return max(last_seq + SEQ_JUMP, ticks) + 1


MARK = "jobs-logs-whole"  # in the state dir, beside `jobs/`: never taken for a job folder


class WholeLogsMark:
    """An empty file, present while every event the worker published is in its job's log.

    Removed when a line cannot be written (an unlink needs no room on a full disk) and put back once
    every held line is written and every jumped job has logged past its jump. A start that does not find
    it jumps the resumed jobs' seqs (`jumped_next_seq`); a `kill -9` with every line written jumps none.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / MARK
        self._present = False  # as this run last set it

    def take(self) -> bool:
        """Whether the last run left the mark (its logs hold all it published); removed either way."""
        try:
            present = stat.S_ISREG(os.lstat(self.path).st_mode)
            os.unlink(self.path)
        except FileNotFoundError:
            return False
        except OSError as exc:  # a folder planted there: no mark, every start jumps (safe, said once)
            log.warning("cannot use %s to know whether job logs are whole: %s", self.path, exc)
            return False
        return present

    def set(self, whole: bool) -> None:
        """Put the mark there (`whole`) or remove it, touching the disk only when that changes."""
        if whole == self._present:
            return
        try:
            if whole:
                # (O_NONBLOCK: a FIFO planted there is ENXIO, not an open that waits for a reader while
                # the journal's lock, and every job's next event, wait with it)
                flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                os.close(os.open(self.path, flags, 0o600))
            else:
                os.unlink(self.path)
        except FileNotFoundError:
            pass  # removed already
        except OSError as exc:
            if not whole:  # the next start may reuse seqs a caller read: worth an error line
                log.error("could not remove %s: a restart may number events as seen ones: %s", self.path, exc)
            return
        self._present = whole
