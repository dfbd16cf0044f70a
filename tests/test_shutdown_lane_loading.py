"""SIGTERM on a real idle worker while its preview lane's espeak child is still starting (a lane opens
just after `/ready`): the start is given up, the child killed, not waited for. The worker waited for
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

# Every espeak child but the first (the engine thread's, started early) writes its pid to `hung` and
# hangs before its `READY`, reading its stdin until the worker closes it or ends (no child outlives it).
HANG_LATER_CHILDREN = """
import os, sys
if "npu_worker.engine.espeak_child_start" in sys.orig_argv:
    marks = os.environ["SUITE_HANG_MARKS"]
    try:
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


def test_sigterm_while_a_lane_child_starts_kills_it_and_the_lane_is_not_failed(tmp_path: Path) -> None:
    hooks, marks = tmp_path / "hooks", tmp_path / "marks"
    hooks.mkdir()
    marks.mkdir()
    (hooks / "sitecustomize.py").write_text(HANG_LATER_CHILDREN)
    env = tokenless_env()
    env.update(PYTHONPATH=f"{hooks}{os.pathsep}{env['PYTHONPATH']}", SUITE_HANG_MARKS=str(marks))
    worker = ServeProcess(["--state-dir", str(tmp_path / "state"), "--preview-lanes", "2"], env)
    try:
        worker.wait_ready()
        child = hung_child(marks, worker)
    finally:
        log = worker.terminate_and_log(seconds(60))
    assert worker.returncode == 0, log
    assert "npu-worker stopped" in log
    # Before: the lane waited out its child's start (10 s) and said so, the worker's exit with it.
    assert "no preview lane" not in log, log
    assert "did not start" not in log and "start within" not in log, log
    assert not os.path.exists(f"/proc/{child}"), "the lane's child outlived the worker"
