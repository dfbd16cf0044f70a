"""`pytest` (pyproject's `-n auto`) starts one xdist worker per CPU the run may use, at most
`MOST_WORKERS`: two on the 2-core CI machine, as `-n 2` did, more on a bigger one, never the host's
count inside a container limited to fewer (tests/worker_count.py says why)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from tests import worker_count
from tests.worker_count import MOST_WORKERS, auto_workers, cgroup_cpus, usable_cpus

ONE_CPU = min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
needs_affinity = pytest.mark.skipif(ONE_CPU is None, reason="no sched_setaffinity on this OS")


def test_a_cgroup_quota_is_read_as_cpus(tmp_path):
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("max 100000\n")
    assert cgroup_cpus(cpu_max) is None, "no quota ('max') read as a limit"
    cpu_max.write_text("150000 100000\n")
    assert cgroup_cpus(cpu_max) == 1.5, "a quota of 1.5 CPUs misread"
    assert usable_cpus(cpu_max) == 1, "1.5 CPUs of quota is not one whole CPU"
    cpu_max.write_text("20000 100000\n")
    assert usable_cpus(cpu_max) == 1, "a fifth of a CPU left no worker"
    assert cgroup_cpus(tmp_path / "missing") is None, "no cgroup v2 file read as a limit"


def test_the_count_is_the_usable_cpus_capped(tmp_path):
    unlimited = tmp_path / "cpu.max"
    unlimited.write_text("max 100000\n")
    cpus = len(os.sched_getaffinity(0)) if ONE_CPU is not None else os.cpu_count()
    assert auto_workers(unlimited) == min(MOST_WORKERS, cpus)
    unlimited.write_text(f"{100000 * (MOST_WORKERS + 4)} 100000\n")
    assert auto_workers(unlimited) <= MOST_WORKERS, "a quota above the cap went past it"


@needs_affinity
def test_the_hook_xdist_asks_counts_the_usable_cpus(pytestconfig, monkeypatch, tmp_path):
    """The count `-n auto` gets is the one pytest-xdist asks its hook for: one CPU's worth under a cgroup
    quota of one (xdist's own answer ignores quotas), and one with this thread bound to one CPU (as
    `taskset -c 0 pytest`; with psutil, xdist's own answer was the host's physical cores)."""
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not loaded (-p no:xdist): no -n auto to count for")
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    ask = pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers
    one_cpu_quota = tmp_path / "cpu.max"
    one_cpu_quota.write_text("100000 100000\n")
    proc_cgroup = tmp_path / "cgroup"
    proc_cgroup.write_text("0::/\n")
    monkeypatch.setattr(worker_count, "PROC_SELF_CGROUP", proc_cgroup)
    monkeypatch.setattr(worker_count, "CGROUP_ROOT", tmp_path)
    assert ask(config=pytestconfig) == 1, "-n auto under a quota of one CPU starts more workers"
    monkeypatch.setattr(worker_count, "PROC_SELF_CGROUP", tmp_path / "no cgroups")
    every_cpu = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {ONE_CPU})
    try:
        bound = ask(config=pytestconfig)
    finally:
        os.sched_setaffinity(0, every_cpu)
    assert bound == 1, f"-n auto under one CPU starts {bound} workers"
    assert ask(config=pytestconfig) == auto_workers(), "the hook's count is not tests/worker_count.py's"


def cgroup_tree(root: Path, own: str, quotas: dict[str, str]) -> Path:
    """A cgroup mount under `root` (`quotas`: a folder's quota file, relative, and its text) and the
    /proc/self/cgroup that puts this process in `own` (v1's `cpu` line, or v2's `0::`)."""
    for name, text in quotas.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    proc_cgroup = root / "proc_self_cgroup"
    proc_cgroup.write_text(own)
    return proc_cgroup


@pytest.mark.parametrize(
    ("own", "quotas"),
    [
        pytest.param(  # a cgroup v1 host or container (this 2-core VM is v1): the `cpu` controller's files
            "4:memory:/ci\n2:cpu,cpuacct:/ci/job\n0::/ci/job\n",
            {"cpu/ci/job/cpu.cfs_quota_us": "100000\n", "cpu/ci/job/cpu.cfs_period_us": "100000\n"},
            id="v1",
        ),
        pytest.param(  # v2 without a cgroup namespace (a systemd slice): the quota is the parent's
            "0::/ci.slice/job.service\n",
            {"ci.slice/cpu.max": "100000 100000\n", "ci.slice/job.service/cpu.max": "max 100000\n"},
            id="v2-nested",
        ),
        pytest.param(  # v1 in a container: its path is the host's, its own cgroup mounted at the root
            "2:cpu,cpuacct:/docker/0123abcd\n",
            {"cpu/cpu.cfs_quota_us": "150000\n", "cpu/cpu.cfs_period_us": "100000\n"},
            id="v1-container",
        ),
    ],
)
@needs_affinity
def test_a_quota_of_this_process_cgroup_or_a_parent_is_read(monkeypatch, tmp_path, own, quotas):
    """Only /sys/fs/cgroup/cpu.max was read, which is there only inside a cgroup v2 namespace: under
    cgroup v1, or in a v2 slice, a quota of one CPU started a worker per CPU of the affinity."""
    monkeypatch.setattr(worker_count, "CGROUP_ROOT", tmp_path, raising=False)
    monkeypatch.setattr(worker_count, "PROC_SELF_CGROUP", cgroup_tree(tmp_path, own, quotas), raising=False)
    every_cpu = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(sorted(every_cpu)[:2]))  # two CPUs where there are: more than the quota
    try:
        workers = auto_workers()
    finally:
        os.sched_setaffinity(0, every_cpu)
    assert workers == 1, f"-n auto under a quota of one CPU starts {workers} workers"


def test_a_worker_count_that_is_no_number_leaves_the_quota_counted(pytestconfig, monkeypatch, tmp_path):
    """PYTEST_XDIST_AUTO_NUM_WORKERS=four: xdist warns that it ignores it and counts the host's cores
    (with psutil, the physical ones), where the hook had handed the count to xdist for any value set."""
    if not pytestconfig.pluginmanager.hasplugin("xdist"):
        pytest.skip("pytest-xdist is not loaded (-p no:xdist): no -n auto to count for")
    monkeypatch.setattr(worker_count, "CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(
        worker_count, "PROC_SELF_CGROUP", cgroup_tree(tmp_path, "0::/\n", {"cpu.max": "1 1\n"})
    )
    ask = pytestconfig.pluginmanager.hook.pytest_xdist_auto_num_workers
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert ask(config=pytestconfig) == 3, "a count named in the environment is not the one taken"
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "four")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # xdist's `not a number`, where it answers
        workers = ask(config=pytestconfig)
    assert workers == 1, f"-n auto with a count that is no number, under a quota of one CPU: {workers}"
