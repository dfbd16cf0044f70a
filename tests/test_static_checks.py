"""ruff (lint + format) and mypy on the package run with the suite, so CI enforces them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import static_background
from tests.timing import seconds
from tests.zipvoice import qdq_background

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("npu_worker", "tests", "benchmarks")


def run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.allow_blocking
def test_ruff_lint_and_format_are_clean():
    lint = run("ruff", "check", *SOURCES)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    formatted = run("ruff", "format", "--check", *SOURCES)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


@pytest.mark.allow_blocking
def test_mypy_on_the_package_is_clean():
    """mypy's run from the session's start (tests/static_background.py), else one of its own."""
    ran = static_background.answer(static_background.MYPY[0], seconds(600))
    if ran is None:
        checked = run("mypy", "npu_worker")
        ran = checked.returncode, checked.stdout + checked.stderr
    status, said = ran
    assert status == 0, said


# A session in a process of its own (a session starts its background jobs once): the mypy job started
# with a cache of its own (so mypy has seconds of work), its mypy process waited for, then the session's
# end: `stop` (argv[3] "stop"), or the process gone without it ("killed").
A_SESSION_WHILE_MYPY_RUNS = """
import os, sys, tempfile, time
from pathlib import Path
from tests import static_background

def parent(process):
    try:
        return int((process / "stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):  # gone meanwhile
        return None

os.environ["MYPY_CACHE_DIR"] = tempfile.mkdtemp(dir=sys.argv[1])
static_background.start(Path(sys.argv[1]) / "checks", ["mypy"])
job, deadline = static_background._started[0].pid, time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:  # another process's child: no event to await
    children = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and parent(p) == job]
    if children:
        break
    time.sleep(0.05)
if sys.argv[3] == "stop":
    static_background.stop()
print(job, *children, flush=True)
os._exit(0)
"""


def alive(pid: int) -> bool:
    """Running, or stopped; not a zombie (its parent, init, has yet to reap it) nor gone."""
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]) not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.allow_blocking
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("end", ["stop", "killed"])
def test_the_sessions_end_ends_the_background_mypy_itself(tmp_path, end):
    """The session's end killed the job's Python process, not the mypy it had started: mypy ran on,
    orphaned, for its seconds of CPU after the session (a run stopped by -x, or by ^C, at the start).
    A session killed (SIGKILL, or a `timeout` that signals the session's process group) ends it too."""
    done = subprocess.run(
        [sys.executable, "-c", A_SESSION_WHILE_MYPY_RUNS, str(tmp_path), str(seconds(60)), end],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds(120),
    )
    assert done.returncode == 0, done.stderr
    [job, mypy] = [int(pid) for pid in done.stdout.split()]  # (no mypy: the job never started it)
    deadline = time.monotonic() + seconds(10)  # a killed process is gone in milliseconds
    while alive(mypy) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(mypy):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job, signal.SIGKILL)  # (not left running by the test either)
        os.kill(mypy, signal.SIGKILL)
        pytest.fail(f"the background job's mypy ({mypy}) ran on after the session's end ({end})")


@pytest.mark.allow_blocking
def test_a_session_neither_reads_nor_removes_a_checks_folder_its_environment_named(tmp_path):
    """A session not under xdist took NPU_WORKER_STATIC_CHECKS from its environment as its own folder:
    a `mypy.json` left there was its mypy's answer at once (a pass for a tree mypy had not read), and the
    session's end removed the folder, whatever it was."""
    named = tmp_path / "someone's"
    named.mkdir()
    (named / "mypy.json").write_text('{"answer": [0, "a run of another tree"]}', encoding="utf-8")
    # No xdist: the session is its own controller. Run from an xdist worker it took itself for one (the
    # worker's PYTEST_XDIST_WORKER) and neither started nor removed anything: the test passed. Nor the
    # outer session's simulator folder, which this one's end would remove as its own.
    outer = (qdq_background.ROOT_VARIABLE, "PYTEST_XDIST_")
    env = {name: value for name, value in os.environ.items() if not name.startswith(outer)}
    env |= {static_background.FOLDER_VARIABLE: str(named), "PYTHONPATH": str(ROOT)}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(  # collected, none run: the session's start and end alone
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--co",
            "-q",
            "-k",
            "ruff",
            "tests/test_static_checks.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=seconds(120),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (named / "mypy.json").is_file(), "the session removed the folder its environment named"
