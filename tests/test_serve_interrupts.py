"""`npu-worker serve` and Ctrl-C before it listens (its modules importing, its app being built): one line
and exit 130, as while the command line is read, never a KeyboardInterrupt traceback."""

from __future__ import annotations

import signal

import pytest

from tests.signal_scripts import run_script, serve_words
from tests.zipvoice.test_prepare_interrupts import INTERRUPTED_IMPORTING


@pytest.mark.parametrize(
    "module",
    [
        "npu_worker.app",  # imported by `serve` once the command line is read
        "npu_worker.jobs.scheduler",  # imported while the app is built
    ],
)
@pytest.mark.parametrize("started_by", ["terminal", "script"])
def test_ctrl_c_before_serve_listens_is_one_line(tmp_path, module, started_by):
    """`script`: started as `npu-worker serve &` by a non-interactive shell, SIGINT ignored from the
    start: a `kill -INT` before it listened did nothing, and the worker ran on."""
    script = started_by == "script"
    done = run_script(
        INTERRUPTED_IMPORTING,
        module,
        *serve_words(tmp_path),
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if script else None,
    )
    said = [line for line in done.stderr.splitlines() if line.startswith("npu-worker serve:")]
    assert said == ["npu-worker serve: interrupted before it began: nothing was done"], done.stderr
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
