"""mypy on the package, run in a background process from the start of the session.

On a fresh clone (no `.mypy_cache`) mypy reads 1 113 modules: ≈ 9.4 s of CPU, 27 s of wall beside a busy
VM (load 12, 2026-12-07), and 46 s of one worker's wall in a suite run under load (1 869 s that run),
the worker doing nothing else meanwhile. So `tests/conftest.py` starts it here once the session has collected
test_static_checks.py's mypy test (the xdist controller, once for all workers, as `qdq_background.py`'s
simulator work), at nice 5 (the suite's timing-sensitive tests keep the first claim on the CPU), and
the test reads what it said: the same command, in the same folder, only the process differs. A test
that finds no result folder (its session started none) runs mypy itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/test_static_checks.py::test_mypy_on_the_package_is_clean"
COMMAND = (sys.executable, "-m", "mypy", "npu_worker")
FOLDER_VARIABLE = "NPU_WORKER_MYPY_RESULT"  # the folder its output and exit status are written in
OUTPUT, STATUS = "mypy.out", "mypy.status"

# mypy's output, then its exit status written aside and renamed (the test never reads half of it).
_RUN = """
import pathlib, subprocess, sys
folder, command = pathlib.Path(sys.argv[1]), sys.argv[2:]
with (folder / "mypy.out").open("w") as out:
    status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode
(folder / "mypy.status.part").write_text(str(status))
(folder / "mypy.status.part").rename(folder / "mypy.status")
"""

_started: list[subprocess.Popen[bytes]] = []


def start(folder: Path) -> None:
    """mypy in the background, its output and status into `folder` (empty, the session's own), once a
    session; the test finds the folder by FOLDER_VARIABLE (xdist's controller names it before its
    workers start: `tests/conftest.py`'s `pytest_configure`)."""
    if _started:
        return
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[FOLDER_VARIABLE] = str(folder)
    _started.append(
        subprocess.Popen(  # noqa: S603 - this interpreter, mypy on this repository
            [sys.executable, "-c", _RUN, str(folder), *COMMAND],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: os.nice(5),
        )
    )


def result(timeout: float) -> tuple[int, str] | None:
    """(mypy's exit status, what it said) from the background run, waited for up to `timeout` seconds;
    None where this session started none."""
    folder = os.environ.get(FOLDER_VARIABLE)
    if folder is None:
        return None
    status = Path(folder) / STATUS
    deadline = time.monotonic() + timeout
    while not status.exists():  # another process's file: no event to await, so a poll with a deadline
        assert time.monotonic() < deadline, f"mypy's background run said nothing in {timeout:g} s"
        time.sleep(0.2)
    return int(status.read_text()), (Path(folder) / OUTPUT).read_text()


def stop() -> None:
    """The session's end: a run still going is ended (its folder is removed with the session's)."""
    for process in _started:
        if process.poll() is None:
            process.kill()
            process.wait()
