"""SIGTERM on a real idle worker while its preview lane's espeak child is still starting (a lane opens
just after `/ready`), or while the engine thread's is (before `/ready`): the start is given up, the
child killed, not waited for. The worker waited for
the child's `READY` (0.6–4 s on a busy host: every test that stops a fresh `serve` paid it), and a
child that never got there held the exit for its start's whole bound (10 s), then logged the lane as
failed. Here the lane's child hangs before its `READY` (a `sitecustomize` on its path, real child
otherwise): the log tells which of the two happened, no clock is read."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.signal_scripts import tokenless_env
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking

# Every espeak child but the first (the engine thread's, started early; every one with SUITE_HANG_FIRST)
# writes its pid to `hung` and hangs before its `READY`, reading its stdin until the worker closes it or
# ends (no child outlives it).
HANG_LATER_CHILDREN = """
import os, sys
if "npu_worker.engine.espeak_child_start" in sys.orig_argv:
    marks = os.environ["SUITE_HANG_MARKS"]
    try:
        if os.environ.get("SUITE_HANG_FIRST"):
            raise FileExistsError
        os.close(os.open(os.path.join(marks, "first"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        with open(os.path.join(marks, "hung.tmp"), "w") as mark:
            mark.write(str(os.getpid()))
        os.rename(os.path.join(marks, "hung.tmp"), os.path.join(marks, "hung"))
        sys.stdin.buffer.read()
        os._exit(0)
"""


def hung_child(marks: Path, worker: ServeProcess) -> int:
    """The lane's child's pid once it hangs in its start. Polled: nothing tells the test when."""
    deadline = time.monotonic() + seconds(30)
    while not (marks / "hung").exists():
        assert worker.poll() is None, f"the worker exited: {worker.log()}"
        assert time.monotonic() < deadline, f"no lane child started: {worker.log()}"
        time.sleep(0.02)
    return int((marks / "hung").read_text())


def hanging_worker(tmp_path: Path, first_too: bool, extra: tuple[str, ...] = ()) -> tuple[ServeProcess, Path]:
    """A real `serve` whose espeak children after the first (every one: `first_too`) hang in their
    start; `extra`: more of its arguments."""
    hooks, marks = tmp_path / "hooks", tmp_path / "marks"
    hooks.mkdir()
    marks.mkdir()
    (hooks / "sitecustomize.py").write_text(HANG_LATER_CHILDREN)
    env = tokenless_env()
    env.update(PYTHONPATH=f"{hooks}{os.pathsep}{env['PYTHONPATH']}", SUITE_HANG_MARKS=str(marks))
    if first_too:
        env["SUITE_HANG_FIRST"] = "1"
    args = ["--state-dir", str(tmp_path / "state"), "--preview-lanes", "2", *extra]
    return ServeProcess(args, env), marks


def stopped_cleanly(log: str, worker: ServeProcess, child: int) -> None:
    assert worker.returncode == 0, log
    assert "npu-worker stopped" in log
    # Before: the load waited out its child's start (10 s) and said so, the worker's exit with it.
    assert "start within" not in log, log  # (its start given up is said: killed, -9)
    assert not os.path.exists(f"/proc/{child}"), "the child outlived the worker"


def test_sigterm_while_a_lane_child_starts_kills_it_and_the_lane_is_not_failed(tmp_path: Path) -> None:
    worker, marks = hanging_worker(tmp_path, first_too=False)
    try:
        worker.wait_ready()
        child = hung_child(marks, worker)
    finally:
        log = worker.terminate_and_log(seconds(60))
    stopped_cleanly(log, worker, child)
    assert "no preview lane" not in log, log


def test_sigterm_while_the_engine_threads_child_starts_kills_it_and_the_load_is_given_up(
    tmp_path: Path,
) -> None:
    worker, marks = hanging_worker(tmp_path, first_too=True)
    try:
        assert worker.port  # listening: its SIGTERM is the drain's, not one before it began
        child = hung_child(marks, worker)  # the engine's load waits on it: `/ready` says loading
    finally:
        log = worker.terminate_and_log(seconds(60))
    stopped_cleanly(log, worker, child)
    assert "engine load stopped by the shutdown" in log and "engine failed to load" not in log, log
