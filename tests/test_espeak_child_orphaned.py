"""A child whose worker ended before the child's `prctl(PR_SET_PDEATHSIG)` exits at once.

The kernel's death signal only comes for a parent that ends after it was asked for: a worker SIGKILLed in
the milliseconds between a child's start and its `prctl` (or while the child was stopped there) left a
child that no signal would end, its stdin perhaps held open by another process, under a subreaper for
ever. After the `prctl` the child compares its parent with the worker pid it was given and exits if the
worker is already gone (`engine/espeak_child_start.py`). Here the child stops itself before its first
line (a `sitecustomize` that SIGSTOPs it), its worker ends, and only then is it continued.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]

# A subreaper (as a container's init) holding the child's stdin open: it starts a worker that starts
# the child (stopped before its first line) and ends; then it continues the child and prints whether it
# ended within BOUND seconds ("ended STATUS") or was still there ("alive", then killed here).
SUPERVISOR = """
import ctypes, os, signal, subprocess, sys, time
bound, stop_dir = float(sys.argv[1]), sys.argv[2]
assert ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
reading, writing = os.pipe()  # the child's stdin: open here for as long as this runs
worker = '''
import os, subprocess, sys, time
env = dict(os.environ, PYTHONPATH=os.pathsep.join([sys.argv[1], os.environ.get("PYTHONPATH", "")]))
child = subprocess.Popen([sys.executable, "-P", "-m", "npu_worker.engine.espeak_child_start", str(os.getpid())],
                         stdin=int(sys.argv[2]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, pass_fds=[int(sys.argv[2])], env=env)
def state():
    with open(f"/proc/{child.pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]
while state() != "T":
    time.sleep(0.001)
print(child.pid, flush=True)
os._exit(0)
'''
started = subprocess.run([sys.executable, "-c", worker, stop_dir, str(reading)], pass_fds=[reading],
                         capture_output=True, text=True, timeout=bound)
os.close(reading)
pid = int(started.stdout)
os.kill(pid, signal.SIGCONT)
deadline = time.monotonic() + bound
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("ended", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.02)
else:
    print("alive")
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
"""


# The child's first lines: its pid where the test finds it (a supervisor that failed or timed out before
# continuing it left it stopped for ever, under init: it is killed at the test's end), then SIGSTOP
STOP_FIRST = """import os, signal
with open(os.path.join(os.path.dirname(__file__), "pids"), "a") as pids:
    pids.write(f"{os.getpid()}\\n")
os.kill(os.getpid(), signal.SIGSTOP)
"""


def test_a_child_whose_worker_ended_before_its_prctl_exits_at_once(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(STOP_FIRST)
    try:
        done = subprocess.run(
            [sys.executable, "-c", SUPERVISOR, str(seconds(10)), str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=seconds(60),
            cwd=ROOT,
        )
        assert done.stdout.split() == ["ended", "0"], (done.stdout, done.stderr)
    finally:
        end_children_left(tmp_path / "pids")


def end_children_left(pids: Path) -> None:
    """SIGKILL each child the sitecustomize stopped that is still there (only on a failed run)."""
    for pid in pids.read_text().split() if pids.exists() else ():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if b"espeak_child_start" in cmdline.read():
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass  # (gone: it ended, as it should)
