"""A stopping signal after `serve`'s drain, as it lets go of the state dir and its children: the
event loop's close had put the defaults back, so it ended the worker at once (-15, -1; a Ctrl-C's
traceback, -2) after a finished drain, where the first signal's drain exits 0."""

from __future__ import annotations

import pytest

from tests.signal_scripts import console_script, run_script, serve_words

# SIGNAL sent by `serve` to itself as it binds its socket (the drain), then again once `server.run`
# has returned (the loop closed, the state dir and the early espeak child not yet let go).
SIGNALLED_AFTER_THE_DRAIN = console_script(
    """
signame = sys.argv.pop(1)
def after_run(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "run" and frame.f_code.co_filename.endswith("server.py"):
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
def at_bind(event, args):
    if event == "socket.bind" and not sys.getprofile():
        sys.setprofile(after_run)
        os.kill(os.getpid(), getattr(signal, signame))
sys.addaudithook(at_bind)
""",
    end='print("exit", main(sys.argv[1:]))',
)


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_after_the_drain_is_the_same_stop(tmp_path, signame):
    done = run_script(SIGNALLED_AFTER_THE_DRAIN, signame, *serve_words(tmp_path))
    assert (done.returncode, done.stdout.strip()) == (0, "exit 0"), done.stderr
    assert f"{signame}: shutting down" in done.stderr and "npu-worker stopped" in done.stderr
