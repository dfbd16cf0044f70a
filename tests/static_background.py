"""Two checks that only run programs, run in background processes from the start of the session.

On a fresh clone (no `.mypy_cache`) mypy reads 1 113 modules: ≈ 9.4 s of CPU, 27 s of wall beside a busy
VM (load 12, 2026-12-07), and 46 s of one worker's wall in a suite run under load (1 869 s that run),
the worker doing nothing else meanwhile; benchmarks/README.md's programs answering `--help` (each
imports what its benchmark needs first) ≈ 10 s of CPU, 28 s of a worker's wall at load 8, 39 s in the
suite. So `tests/conftest.py` starts each here once the session has collected its test (the xdist
controller, once for all workers, as `qdq_background.py`'s simulator work), at nice 5 (the suite's
timing-sensitive tests keep the first claim on the CPU), and the test reads what it got: the same
commands, in the same folder, only the process differs. A test whose session started none runs them
itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDER_VARIABLE = "NPU_WORKER_STATIC_CHECKS"  # the folder the results are written in
MYPY = ("mypy", "tests/test_static_checks.py::test_mypy_on_the_package_is_clean")
HELPS = (
    "helps",
    "tests/test_benchmarks_index.py::test_every_benchmark_command_in_the_index_exists_and_answers_help",
)
JOBS = dict((MYPY, HELPS))  # a job's name: the test that reads it

_started: list[subprocess.Popen[bytes]] = []
_held: list[int] = []  # the write end of the jobs' lifeline (`_end_with_the_session`)


def run(argv: tuple[str, ...], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A program as both checks run it: in the repository, its output kept."""
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def helps_asked(programs: list[tuple[str, ...]]) -> dict[tuple[str, ...], subprocess.CompletedProcess[str]]:
    """Each benchmark program's `--help`, four at a time."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(programs, pool.map(run, programs), strict=True))


def benchmark_programs() -> list[tuple[str, ...]]:
    from tests.test_benchmarks_index import script_programs

    return script_programs()


def _answer(job: str) -> Any:
    if job == MYPY[0]:
        checked = run((sys.executable, "-m", "mypy", "npu_worker"), timeout=600)
        return [checked.returncode, checked.stdout + checked.stderr]
    return [
        [list(argv), done.returncode, done.stdout, done.stderr]
        for argv, done in helps_asked(benchmark_programs()).items()
    ]


def main(folder: Path, job: str) -> None:
    """One job's answer, as JSON, written aside and renamed (the test never reads half of it); a job
    that failed writes its traceback instead, which the test raises."""
    try:
        answered = {"answer": _answer(job)}
    except Exception:  # noqa: BLE001 - said by the waiting test
        answered = {"failed": traceback.format_exc()}
    part = folder / f"{job}.json.part"
    part.write_text(json.dumps(answered), encoding="utf-8")
    part.rename(folder / f"{job}.json")


def start(folder: Path, jobs: list[str]) -> None:
    """`jobs` in background processes, their answers into `folder` (empty, the session's own), once a
    session; the tests find the folder by FOLDER_VARIABLE (xdist's controller names it before its
    workers start: `tests/conftest.py`'s `pytest_configure`)."""
    if _started or not jobs:
        return
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[FOLDER_VARIABLE] = str(folder)
    lifeline, held = os.pipe()  # `held` stays open in this process only: its end is the jobs' end
    _held.append(held)
    for job in jobs:
        process = subprocess.Popen(  # noqa: S603 - this interpreter, this module
            [sys.executable, "-m", "tests.static_background", str(folder), job, str(lifeline)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=(folder / f"{job}.log").open("wb"),
            process_group=0,  # with what it starts (mypy, the programs' --help): `stop` ends them all
            pass_fds=(lifeline,),
            preexec_fn=lambda: os.nice(5),
        )
        _started.append(process)
        threading.Thread(target=_say_an_end_without_answer, args=(process, folder, job), daemon=True).start()
    os.close(lifeline)


def _say_an_end_without_answer(process: subprocess.Popen[bytes], folder: Path, job: str) -> None:
    """A job's process that ended without writing its answer (the OOM killer's SIGKILL) writes its exit
    status instead, for `answer`, in another process (an xdist worker) that cannot wait for it: the
    test waited its whole timeout, 600 s, for an answer no process would write."""
    status = process.wait()
    if (folder / f"{job}.json").exists():
        return
    with contextlib.suppress(OSError):  # the session's folder, removed at its end (`stop` kills it)
        part = folder / f"{job}.ended.part"
        part.write_text(str(status), encoding="utf-8")
        part.rename(folder / f"{job}.ended")


def _end_with_the_session(lifeline: int) -> None:
    """A job's thread: its group ends when the session's process does, however it ends (SIGKILL, a
    `timeout` that signals the session's process group, which the job's is not in)."""
    os.read(lifeline, 1)  # end of file: the session's process, which held the other end, is gone
    os.killpg(0, signal.SIGKILL)


def answer(job: str, timeout: float) -> Any:
    """The job's answer from its background run, waited for up to `timeout` seconds; None where this
    session started none."""
    folder = os.environ.get(FOLDER_VARIABLE)
    if folder is None or not (Path(folder) / f"{job}.log").exists():
        return None
    written, ended = Path(folder) / f"{job}.json", Path(folder) / f"{job}.ended"
    deadline = time.monotonic() + timeout
    while not written.exists():  # another process's file: no event to await, so a poll with a deadline
        log = (Path(folder) / f"{job}.log").read_text(errors="replace")
        if ended.exists() and not written.exists():  # (its answer renamed in just before it ended)
            status = ended.read_text(encoding="utf-8")
            raise AssertionError(f"the background {job} ended with exit status {status}, no answer: {log}")
        assert time.monotonic() < deadline, f"the background {job} gave no answer in {timeout:g} s: {log}"
        time.sleep(0.2)
    answered = json.loads(written.read_text(encoding="utf-8"))
    assert "failed" not in answered, f"the background {job} failed: {answered['failed']}"
    return answered["answer"]


def stop() -> None:
    """The session's end: a job still running is ended, with the programs it started (its own process
    alone left its mypy running on, orphaned); its folder is removed with the session's."""
    for process in _started:
        with contextlib.suppress(ProcessLookupError):  # (none left in its group)
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    while _held:
        os.close(_held.pop())


if __name__ == "__main__":
    threading.Thread(target=_end_with_the_session, args=(int(sys.argv[3]),), daemon=True).start()
    main(Path(sys.argv[1]), sys.argv[2])
