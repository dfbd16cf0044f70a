"""What the benchmark scripts share: the checkout's paths, the port a worker listens on, waiting for a started worker, the
wall/CPU clock around one call, percentiles, and the JSON report every script writes (its command and
date first, so a result file says what made it).

The scripts run as `python benchmarks/NAME.py`: this folder is then first on `sys.path` and `import common`
finds this module. Importing it appends the checkout to `sys.path`, so `npu_worker` imports without
an installed package; an installed one or `PYTHONPATH` still comes first (server_overhead.py measures
whichever checkout `PYTHONPATH` names).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parents[1]
LECTURE = REPO / "npu_worker" / "bench" / "lecture_ko_39.json"
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))


def compile_checkout(root: Path) -> None:
    """`root`'s `npu_worker` bytecode written, as `pip install` writes an installed worker's: with
    PYTHONDONTWRITEBYTECODE set (a container's habit, this VM's shell) a checkout without __pycache__
    compiled its modules at each start, ≈ 50-200 ms of the worker's CPU and 80-150 ms of each espeak
    child's that a deployed worker never pays (SERVER_OVERHEAD.md, 2026-12-06, stop 55)."""
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "npu_worker")], check=False)
    if done.returncode != 0:  # (a read-only install: its bytecode is pip's, or the figures say source)
        print(f"compileall could not write all of {root / 'npu_worker'}'s bytecode", file=sys.stderr)


def free_port() -> int:
    """A loopback port nobody listens on right now (for a server that cannot bind port 0, such as
    redis-server): another process may take it before the server binds it (prefer `listening_port`)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening_port(process: subprocess.Popen[Any], limit: float = 60.0) -> int:
    """The TCP port `process` (a worker started with `--port 0`) listens on, read from Linux's /proc once
    it has bound it: a port picked free first and handed to the worker may be taken meanwhile, by a
    process that would then answer the benchmark. (The worker's log also says it, at INFO, which the
    benchmarks' quieter log levels leave out.)"""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the worker exited ({process.returncode}) before it listened")
        if ports := listening_ports(process.pid):
            return min(ports)
        time.sleep(0.05)
    raise RuntimeError(f"the worker did not listen within {limit:.0f} s")


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid`'s own sockets listen on (not its children's)."""
    inodes = set()
    with contextlib.suppress(OSError):  # (a descriptor closed while listed)
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = row.split()  # sl local_address rem_address st ... inode (the tenth)
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


async def wait_until_ok(
    session: aiohttp.ClientSession, url: str, limit: float, interval: float = 0.1
) -> None:
    """Poll `url` until it answers 200 (a started worker's `/ready` or `/health`); RuntimeError after
    `limit` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(interval)
    raise RuntimeError(f"{url} did not answer 200 within {limit:.0f} s")


def clocked(call: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and process CPU seconds of one call (the CPU figure is the work itself on a machine
    whose other load makes wall time jump)."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (q in [0, 100]) by linear interpolation between the closest ranks, rounded
    to 0.01: numpy's default and `statistics.quantiles(method="inclusive")`, which the recorded
    reports used."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    value = ordered[low] + (ordered[high] - ordered[low]) * (position - low)
    return round(float(value), 2)


def percentiles(values: list[float], qs: Iterable[int] = (50, 95, 99)) -> dict[str, float | None]:
    """`{"p50": …, "p95": …, "p99": …, "n": count}`; None for each percentile of no values."""
    out: dict[str, float | None] = {f"p{q}": percentile(values, q) if values else None for q in qs}
    out["n"] = len(values)
    return out


def utc_stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def report_header(**extra: Any) -> dict[str, Any]:
    """The first fields of every result file: the command as typed and when it ran."""
    return {"command": " ".join(["python", *sys.argv]), "date": utc_stamp(), **extra}


def write_report(report: dict[str, Any], path: str | Path | None, echo: bool = True) -> None:
    """Print the report as JSON (unless `echo` is off) and write it to `path` when one is given."""
    text = json.dumps(report, indent=2)
    if echo:
        print(text)
    if path:
        Path(path).write_text(text + "\n", encoding="utf-8")
