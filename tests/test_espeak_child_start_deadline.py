"""An espeak child stopped (SIGSTOP, a hung host) before it is ready is killed at `START_SECONDS` and
its start fails with `ModelLoadError`: its lane's load waited for ever, the shutdown's join for its 30 s,
and the child, left stopped after the worker's exit, held the worker's stderr open (a test reading the
log to its end gave up 60 s later)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

from npu_worker.engine import espeak_process
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.protocol import ModelLoadError
from tests.test_espeak_child_restart import children, running
from tests.timing import seconds


def runs_the_child(pid: int) -> bool:
    with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/cmdline", "rb") as line:
        return b"npu_worker.engine.espeak_child" in line.read()
    return False


def test_a_child_stopped_before_it_is_ready_is_killed_and_its_start_fails(monkeypatch):
    monkeypatch.setattr(espeak_process, "START_SECONDS", 1.0)
    before = children()
    outcome: list[object] = []

    def start() -> None:
        try:
            outcome.append(ChildEspeak())
        except BaseException as error:  # noqa: BLE001 - what the start ended with
            outcome.append(error)

    starter = threading.Thread(target=start, daemon=True)
    starter.start()
    deadline = time.monotonic() + seconds(10)
    # stopped as soon as it runs the child's code: long before its READY (one stopped between its fork
    # and its exec held `Popen` itself, before any deadline: the test hung when it caught that)
    while not (new := [pid for pid in children() - before if runs_the_child(pid)]):
        assert time.monotonic() < deadline, "no child started"
        time.sleep(0.001)
    (child,) = new
    os.kill(child, signal.SIGSTOP)
    starter.join(seconds(20))
    try:
        assert outcome, "the start waited for ever on a child stopped before it was ready"
        error = outcome[0]
        if isinstance(error, ChildEspeak):  # it was ready before the stop reached it: nothing tested
            error.close()
        assert isinstance(error, ModelLoadError), error
        assert "did not answer its start within 1 s" in error.message and "killed" in error.message
        assert not running(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
