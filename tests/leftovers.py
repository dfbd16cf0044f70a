"""What a test session leaves running that no later test would report: its child processes still
alive at the session's end. A worker, an espeak child or a redis-server a test forgot went on running
past the run (on CI, into the next file's CPU). One that has exited and was never waited for (a
zombie) costs nothing and is not counted; one that ends within a few seconds (an espeak child killed
by a deadline armed before its engine closed) is waited for."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.timing import seconds


def child_processes() -> dict[int, str]:
    """This process's children now: pid → `state command line` (Linux's /proc; none elsewhere)."""
    me = os.getpid()
    found: dict[int, str] = {}
    for entry in Path("/proc").glob("[0-9]*") if Path("/proc/self/stat").exists() else ():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # (it ended meanwhile)
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == me:
            found[int(entry.name)] = f"{state} {command.strip()[:200] or stat.split(' ', 2)[1]}"
    return found


def running_children(before: dict[int, str]) -> dict[int, str]:
    """The children started since `before` that are still running (zombies left out)."""
    return {pid: what for pid, what in child_processes().items() if pid not in before and what[0] != "Z"}


def children_left(before: dict[int, str], wait: float = 0.0) -> str:
    """The children started since `before` still running after up to `wait` s, in words; empty if none."""
    deadline = time.monotonic() + wait
    while (left := running_children(before)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return "; ".join(f"pid {pid} ({what})" for pid, what in sorted(left.items()))


SESSION_END_WAIT = seconds(5)  # (nothing is waited for when nothing is left)
