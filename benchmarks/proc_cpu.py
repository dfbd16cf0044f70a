"""A process's CPU time from /proc, for server_overhead.py: the worker with its child processes, and
per thread by name (py-spy names Python's threads; Python 3.11 gives them no OS name)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_ms(pid: int) -> float:
    """utime + stime of every thread of `pid` and of its child processes (espeak-ng's, with
    `--espeak-process`): the server's CPU wherever it runs."""
    total = process_cpu_ms_of(Path(f"/proc/{pid}/stat"))
    for child in child_pids(pid):
        try:
            total += process_cpu_ms_of(Path(f"/proc/{child}/stat"))
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile
    return total


def child_pids(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def thread_cpu_ms(pid: int) -> dict[int, float]:
    """utime + stime of each thread of `pid` (ms), by thread id, and of each child process, by pid."""
    cpu = {}
    for stat in [task / "stat" for task in Path(f"/proc/{pid}/task").iterdir()] + [
        Path(f"/proc/{child}/stat") for child in child_pids(pid)
    ]:
        try:
            cpu[int(stat.parent.name)] = process_cpu_ms_of(stat)
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return cpu


def sleeps(pid: int, tids: list[int]) -> dict[int, int]:
    """Each thread's voluntary context switches so far (a wait that slept: a wake-up each)."""
    counts = {}
    for tid in tids:
        switches = voluntary_switches(Path(f"/proc/{pid}/task/{tid}/status"))
        if switches is not None:
            counts[tid] = switches
    return counts


def voluntary_switches(status: Path) -> int | None:
    """The voluntary context switches a /proc `status` file counts; None where it has no such line."""
    for line in status.read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return None


def process_cpu_ms_of(stat: Path) -> float:
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / CLOCK_TICKS


def thread_names(pid: int) -> dict[int, str]:
    """Python's thread names by thread id, from `py-spy dump` (Python 3.11 gives threads no OS name);
    empty when py-spy is not installed."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        return {}
    dump = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, check=False)
    names = {child: "child processes" for child in child_pids(pid)}
    for line in dump.stdout.splitlines():
        if line.startswith("Thread ") and '"' in line:
            head, _, rest = line.partition(" (")
            names[int(head.split()[1], 0)] = rest.split('"')[1]
    return names


def per_thread(pid: int, before: dict[int, float], count: int) -> dict[str, float]:
    """CPU per request by thread name over a phase (threads of one pool summed by name prefix)."""
    after, names = thread_cpu_ms(pid), thread_names(pid)
    out: dict[str, float] = {}
    for tid, ms in after.items():
        name = names.get(tid, f"tid {tid}")
        # the loop's executor's pool and the scheduler's admission threads (stop 59)
        name = name.rsplit("_", 1)[0] if name.startswith(("asyncio_", "npu-worker-admit_")) else name
        out[name] = out.get(name, 0.0) + (ms - before.get(tid, 0.0)) / count
    return {name: round(ms, 2) for name, ms in sorted(out.items(), key=lambda kv: -kv[1]) if ms > 0}
