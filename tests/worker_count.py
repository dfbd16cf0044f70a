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
from collections.abc import Iterator
from pathlib import Path

MOST_WORKERS = 4
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
V1_QUOTA, V2_QUOTA = "cpu.cfs_quota_us", "cpu.max"


def cgroup_cpus(quota_file: Path) -> float | None:
    """The CPUs one cgroup's quota allows: v2's `cpu.max` (`QUOTA PERIOD`, `max` for none) or v1's
    `cpu.cfs_quota_us` (-1 for none; its period in `cpu.cfs_period_us` beside it). None without a quota,
    or where there is no such file."""
    try:
        if quota_file.name == V1_QUOTA:
            quota = quota_file.read_text().strip()
            period = quota_file.with_name("cpu.cfs_period_us").read_text().strip()
        else:
            quota, period = quota_file.read_text().split()[:2]
        if quota in ("max", "-1"):
            return None
        return int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):
        return None


def quota_files(root: Path | None = None, proc_cgroup: Path | None = None) -> Iterator[Path]:
    """Every quota file that bounds this process: its cgroup's and each parent's (a parent's quota
    limits its children too), under cgroup v2 (`0::PATH`) and v1 (the `cpu` controller's hierarchy).
    The file at the root alone (`/sys/fs/cgroup/cpu.max`, all that was read) is there only inside a v2
    cgroup namespace: a quota on a CI job in a systemd slice, or under cgroup v1 (as this 2-core VM's
    cgroups are), was missed."""
    root = root or CGROUP_ROOT
    try:
        lines = (proc_cgroup or PROC_SELF_CGROUP).read_text().splitlines()
    except OSError:  # another OS
        return
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            mount, name = root, V2_QUOTA
        elif "cpu" in controllers.split(","):
            mount, name = root / "cpu", V1_QUOTA
            mount = mount if mount.is_dir() else root / controllers
        else:
            continue
        own = Path(os.path.normpath(mount / path.strip().lstrip("/")))  # (`/..` outside a namespace's root)
        folder = own if own.is_relative_to(mount) and own.is_dir() else mount  # a namespace's is the mount
        while True:
            yield folder / name
            if folder == mount:
                break
            folder = folder.parent


def usable_cpus(cpu_max: Path | None = None) -> int:
    """The CPUs this process may use: its affinity (taskset, a cpuset), less where a quota allows
    fewer (whole CPUs, at least one): `cpu_max`'s, else the least of its cgroups'."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    files = [cpu_max] if cpu_max is not None else quota_files()
    quotas = [quota for quota in map(cgroup_cpus, files) if quota is not None]
    if quotas:
        cpus = min(cpus, max(1, math.floor(min(quotas))))
    return cpus


def named_workers() -> int | None:
    """PYTEST_XDIST_AUTO_NUM_WORKERS's count, as xdist reads it; None where unset or not a number."""
    try:
        return int(os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or "")
    except ValueError:
        return None


def auto_workers(cpu_max: Path | None = None) -> int:
    return max(1, min(MOST_WORKERS, usable_cpus(cpu_max)))
