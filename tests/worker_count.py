"""How many pytest-xdist workers `-n auto` starts (pyproject's `addopts`; tests/conftest.py's
`pytest_xdist_auto_num_workers`): the CPUs this process may run on, not the host's count, capped.

xdist's own count is the affinity's CPUs, or with psutil installed the whole host's physical cores:
neither sees a container's CFS quota (two CPUs' worth on a 64-core host started 32 or 64 workers, each
with its servers and ONNX sessions, on two CPUs of time). The suite's waits are set for two busy workers on two cores; past `MOST_WORKERS` nothing
was measured, so none are started.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

MOST_WORKERS = 4
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def cgroup_cpus(cpu_max: Path | None = None) -> float | None:
    """The CPUs a cgroup v2 quota allows (`QUOTA PERIOD`, `max` for none): None without one, or where
    there is no such file (cgroup v1, another OS)."""
    try:
        quota, period = (cpu_max or CGROUP_CPU_MAX).read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return int(quota) / int(period)


def usable_cpus(cpu_max: Path | None = None) -> int:
    """The CPUs this process may use: its affinity (taskset, a cpuset), less where a quota allows
    fewer (whole CPUs, at least one)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cgroup_cpus(cpu_max)
    if quota is not None:
        cpus = min(cpus, max(1, math.floor(quota)))
    return cpus


def auto_workers(cpu_max: Path | None = None) -> int:
    return max(1, min(MOST_WORKERS, usable_cpus(cpu_max)))
