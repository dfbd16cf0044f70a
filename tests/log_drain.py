"""A child process whose stderr (its log, text) a thread reads as it comes. A test that piped a worker's
log and read it only at exit left the worker to block on its next log line once a pipe's 64 KiB were
full (an access-log line per poll fills one in a few hundred requests): the test then waited out its
timeout on a worker that could no longer answer."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from tests.timing import seconds


class LoggedProcess(subprocess.Popen[str]):
    """`subprocess.Popen(args, stderr=PIPE, text=True, **popen)`, its stderr read to the end on a thread.
    `echo_from` (a level name): the lines logged at that level or above, with the lines that follow one
    (its traceback), are also written to this process's stderr as they come (a tool's own output)."""

    def __init__(self, args: Sequence[str], echo_from: str | None = None, **popen: Any) -> None:
        self._echo_from = logging.getLevelNamesMapping()[echo_from] if echo_from else None
        super().__init__(args, stderr=subprocess.PIPE, text=True, **popen)
        self._lines: list[str] = []
        self._ended = False
        self._grew = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.stderr is not None
        echoing = False
        for line in self.stderr:
            with self._grew:
                self._lines.append(line)
                self._grew.notify_all()
            if self._echo_from is not None:
                echoing = echoed(line, self._echo_from, echoing)
        self.stderr.close()  # read to its end: left open, its GC warned (unclosed file) in a later test
        with self._grew:
            self._ended = True
            self._grew.notify_all()  # the end: waiters stop waiting for a line that cannot come

    def kill(self) -> None:
        """SIGKILL, and the process reaped: one killed and never waited for stayed a zombie, and its
        Popen warned 'subprocess … is still running' into whichever later test collected it."""
        super().kill()
        self.wait(seconds(30))

    def log(self) -> str:
        """What the process has logged so far."""
        with self._grew:
            return "".join(self._lines)

    def log_until(self, text: str, timeout: float) -> str:
        """The log up to and including the first line holding `text`; AssertionError (with the log) if
        the process's log ends, or `timeout` seconds pass, without one."""
        deadline = time.monotonic() + timeout
        with self._grew:
            while True:
                for number, line in enumerate(self._lines):
                    if text in line:
                        return "".join(self._lines[: number + 1])
                left = deadline - time.monotonic()
                assert not self._ended and left > 0, f"no {text!r} in: {''.join(self._lines)}"
                self._grew.wait(min(left, 0.5))

    def log_at_exit(self, timeout: float) -> str:
        """The whole log once the process has ended on its own (its stderr read to the end)."""
        self.wait(timeout)
        self._reader.join(timeout)
        return self.log()

    def terminate_and_log(self, timeout: float) -> str:
        """SIGTERM, then the whole log once the process has ended."""
        self.terminate()
        return self.log_at_exit(timeout)


def echoed(line: str, echo_from: int, echoing: bool) -> bool:
    """Writes `line` (`serve`'s format: date, time, level, ...) to stderr if its level is `echo_from` or
    above, or, a line without a level, if the line before was written; whether it was."""
    words = line.split(maxsplit=3)
    level = logging.getLevelNamesMapping().get(words[2]) if len(words) > 2 else None
    if (level is None and echoing) or (level is not None and level >= echo_from):
        sys.stderr.write(line)
        return True
    return False
