"""A worker's death ends its espeak children, whatever ended it and whatever state they are in.

A child's life was its stdin's alone: one stopped (SIGSTOP) when the worker was SIGKILLed never read
the close, and in its own process group (out of a terminal's Ctrl-C) a group SIGKILL missed it too.
Under a subreaper (a container's init, here the test's supervisor) it stayed stopped for ever. The
kernel now SIGKILLs a child when the thread that started it ends (`engine/espeak_child_start.py`),
and every child is started on a thread that lives as long as the worker (`engine/espeak_early.py`).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from npu_worker.engine import espeak_process
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from tests.test_espeak_child_restart import running
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]

# A subreaper (as a container's init) that starts `serve` with argv, waits for its preview lanes, stops
# every child of the worker (SIGSTOP), SIGKILLs the worker and prints, for each child, whether it
# ended within BOUND seconds ("ended") or was still there ("stopped", then killed here).
SUPERVISOR = """
import ctypes, os, signal, subprocess, sys, time
bound = float(sys.argv.pop(1))
assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
serve = "import sys; from npu_worker.cli import main; sys.exit(main(sys.argv[1:]))"
worker = subprocess.Popen([sys.executable, "-c", serve, *sys.argv[1:]], stderr=subprocess.PIPE, text=True)
for line in worker.stderr:
    if "preview lanes:" in line:
        break
children = set()
for task in os.listdir(f"/proc/{worker.pid}/task"):
    with open(f"/proc/{worker.pid}/task/{task}/children") as listed:
        children.update(int(pid) for pid in listed.read().split())
for pid in children:
    os.kill(pid, signal.SIGSTOP)
time.sleep(0.2)
os.kill(worker.pid, signal.SIGKILL)
worker.wait()
deadline, left = time.monotonic() + bound, set(children)
while left and time.monotonic() < deadline:
    pid, _ = os.waitpid(-1, os.WNOHANG)
    left.discard(pid)
    time.sleep(0.0 if pid else 0.05)
for pid in left:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(len(children), "children:", " ".join(sorted("stopped" if pid in left else "ended" for pid in children)))
"""


def test_a_worker_sigkilled_while_its_children_are_stopped_takes_them_with_it(tmp_path):
    argv = ["serve", "--port", "0", "--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-c", SUPERVISOR, str(seconds(10)), *argv],
        capture_output=True,
        text=True,
        timeout=seconds(90),
        cwd=ROOT,
    )
    count, said, *outcomes = done.stdout.split()
    assert said == "children:" and int(count) >= 2, done.stderr  # the engine's and a preview lane's
    assert outcomes == ["ended"] * int(count), done.stderr


def test_a_child_started_on_a_thread_that_has_ended_still_serves(monkeypatch):
    """The kernel's signal follows the thread that started the child, not the process: one started on
    an engine thread or an executor's (a lane's load, a restart) would die with that thread. The start's
    own bound is not what is checked: at load 13 a child's interpreter took over its 10 s to be ready,
    the load failed on its thread unseen, and the test failed later on a child that never was."""
    monkeypatch.setattr(espeak_process, "START_SECONDS", max(espeak_process.START_SECONDS, seconds(60)))
    engine = EspeakProcessEngine()
    failed: list[BaseException] = []

    def load() -> None:
        try:
            engine.load()
        except BaseException as error:  # noqa: BLE001 - reported by the test, not the thread's hook
            failed.append(error)

    loading = threading.Thread(target=load)
    loading.start()
    loading.join()
    assert not failed, failed
    # join returns before the kernel's thread has gone (and with it the signal): the synthesis below
    # came first, and passed without the spawner thread
    task, gone_by = Path(f"/proc/self/task/{loading.native_id}"), time.monotonic() + seconds(10)
    while task.exists() and time.monotonic() < gone_by:
        time.sleep(0.01)
    assert not task.exists()
    try:
        pid = engine.child.pid
        made = sum(chunk.size for chunk in engine.stream(SynthesisRequest("hello there")))
        assert made > 0 and engine.child.pid == pid and running(pid)
    finally:
        engine.close()
