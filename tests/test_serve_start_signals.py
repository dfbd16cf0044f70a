"""A signal during `npu-worker serve`'s start, once the espeak child was started early
(`engine/espeak_early.py`): the command says so in one line and leaves no child of its own running."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.signal_scripts import IMPORTING_HOOK, console_script, run_script, serve_words

# `serve` with SIGNAL sent to itself the moment it imports MODULE (an audit hook); then the exit status
# and the worker's own children still running (not zombies) when `main` has returned.
SIGNALLED_IMPORTING = console_script(
    IMPORTING_HOOK,
    end="""code = main(sys.argv[1:])
from tests.test_espeak_child_restart import children, running
print("exit", code, "children running", sorted(pid for pid in children() if running(pid)))""",
)


def serve_signalled_importing(
    tmp_path: Path, module: str, signame: str, script: str = SIGNALLED_IMPORTING
) -> subprocess.CompletedProcess[str]:
    """`serve` run by `script` (SIGNALLED_IMPORTING, or a variant of it) with MODULE and SIGNAL."""
    return run_script(script, module, signame, *serve_words(tmp_path))


def test_ctrl_c_after_the_early_child_started_ends_it(tmp_path):
    """A Ctrl-C while the app's modules imported skipped the child's discard: it ran on after the
    worker's one line (until its own start ended and it found its stdin closed; for ever in a process
    that goes on, as a test's)."""
    done = serve_signalled_importing(tmp_path, "npu_worker.app", "SIGINT")  # once the child started
    assert done.stdout.strip() == "exit 130 children running []", done.stderr
    assert done.stderr.splitlines()[-1] == "npu-worker serve: interrupted before it began: nothing was done"


def test_sigterm_while_serve_imports_is_one_line_and_ends_the_child(tmp_path):
    """It ended the worker at once (-15), the child started early left to end on its own."""
    done = serve_signalled_importing(tmp_path, "npu_worker.app", "SIGTERM")
    assert done.stdout.strip() == "exit 143 children running []", done.stderr
    assert done.stderr.splitlines()[-1] == "npu-worker serve: terminated before it began: nothing was done"
    assert "Traceback" not in done.stderr


# The same, the moment `serve` binds its socket (`run` has begun: the app starts after the bind).
SIGNALLED_BINDING = SIGNALLED_IMPORTING.replace(
    'event == "import" and args[0] == module', 'event == "socket.bind" and module'
)


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_while_serve_binds_its_socket_is_a_drain(tmp_path, signame):
    """`run` heard its signals once it listened: a SIGINT while it bound and started the app was a
    KeyboardInterrupt traceback (exit 1), a SIGTERM ended it at once (-15). The engine then loads
    during the drain: the preview lanes it opened after the runner's join had read its threads were
    never waited for, their espeak children still running when `serve` returned (2 of 4 runs)."""
    done = run_script(SIGNALLED_BINDING, "bind", signame, *serve_words(tmp_path), "--preview-lanes", "3")
    assert done.stdout.strip() == "exit 0 children running []", done.stderr
    assert f"{signame}: shutting down" in done.stderr and "npu-worker stopped" in done.stderr
    assert "Traceback" not in done.stderr
