"""A SIGHUP during `npu-worker serve`'s start (a closed terminal, a supervisor's stop) before `run`
takes it over: it ended the worker at once (-1), with no word of why; it is now one line and 129,
as a SIGTERM then is one line and 143, and the state dir and the espeak child are let go."""

from __future__ import annotations

from tests.test_serve_start_signals import SIGNALLED_IMPORTING, serve_signalled_importing


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
    done = serve_signalled_importing(tmp_path, "npu_worker.app", "SIGHUP", IGNORING_SIGHUP)
    assert done.stdout.strip() == "exit 0 children running []", (done.returncode, done.stderr)
    assert "SIGTERM: shutting down" in done.stderr and "hung up" not in done.stderr


# As IGNORING_SIGHUP, with a SIGHUP and then a SIGTERM once it binds its socket (its signals heard).
NOHUP_LISTENING = SIGNALLED_IMPORTING.replace(
    "sys.addaudithook(hook)",
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
    "def hang_up_then_stop(event, args):\n"
    "    if event == 'socket.bind':\n"
    "        os.kill(os.getpid(), signal.SIGHUP)\n"
    "        os.kill(os.getpid(), signal.SIGTERM)\n"
    "sys.addaudithook(hang_up_then_stop)",
)


def test_a_worker_under_nohup_runs_on_after_a_sighup_once_it_listens(tmp_path):
    """`nohup npu-worker serve &` and the terminal closed: the SIGHUP it asked to be ignored stopped
    the worker once it listened (the start kept it ignored, `run` drained on it); the SIGTERM after it
    was then a second signal, an exit at once with status 1 and no drain."""
    done = serve_signalled_importing(tmp_path, "npu_worker.app", "SIGHUP", NOHUP_LISTENING)
    assert done.stdout.strip() == "exit 0 children running []", (done.returncode, done.stderr)
    assert "SIGTERM: shutting down" in done.stderr and "SIGHUP" not in done.stderr
