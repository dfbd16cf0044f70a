"""A SIGHUP during `npu-worker serve`'s start (a closed terminal, a supervisor's stop) before `run`
takes it over: it ended the worker at once (-1), with no word of why; it is now one line and 129,
as a SIGTERM then is one line and 143, and the state dir and the espeak child are let go."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request

from tests.serve_process import ServeProcess
from tests.test_serve_start_signals import ROOT, SIGNALLED_IMPORTING, serve_signalled_importing
from tests.timing import seconds


def test_sighup_while_serve_imports_is_one_line_and_ends_the_child(tmp_path):
    done = serve_signalled_importing(tmp_path, "npu_worker.app", "SIGHUP")
    assert done.stdout.strip() == "exit 129 children running []", (done.returncode, done.stderr)
    assert done.stderr.splitlines()[-1] == "npu-worker serve: hung up before it began: nothing was done"
    assert "Traceback" not in done.stderr


# As SIGNALLED_IMPORTING, started with SIGHUP ignored (`nohup`), and a SIGTERM once it binds its socket.
IGNORING_SIGHUP = SIGNALLED_IMPORTING.replace(
    "sys.addaudithook(hook)",
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
    "def drain(event, args):\n"
    "    if event == 'socket.bind':\n"
    "        os.kill(os.getpid(), signal.SIGTERM)\n"
    "sys.addaudithook(hook)\n"
    "sys.addaudithook(drain)",
)


def test_a_start_under_nohup_goes_on_after_a_sighup(tmp_path):
    """`nohup npu-worker serve`: the SIGHUP its caller asked to be ignored does not end the start."""
    done = subprocess.run(
        [sys.executable, "-c", IGNORING_SIGHUP, "npu_worker.app", "SIGHUP", "serve", "--port", "0"]
        + ["--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.stdout.strip() == "exit 0 children running []", (done.returncode, done.stderr)
    assert "SIGTERM: shutting down" in done.stderr and "hung up" not in done.stderr


def test_a_sighup_once_serving_under_nohup_is_ignored(tmp_path):
    """`nohup npu-worker serve`: `run` put its own SIGHUP handler over the one nohup ignored, so a SIGHUP
    once it listened began a drain (and a SIGTERM then exited at once, 1)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)]
    process = ServeProcess(args, env, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        base = process.base  # it listens
        process.send_signal(signal.SIGHUP)
        with urllib.request.urlopen(f"{base}/health", timeout=seconds(30)) as health:
            assert health.status == 200
        process.send_signal(signal.SIGTERM)
        log = process.log_at_exit(seconds(60))
    finally:
        process.kill()
    assert process.returncode == 0, log
    assert "SIGTERM: shutting down" in log and "SIGHUP" not in log
