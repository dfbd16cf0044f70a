"""Children that run `npu-worker`'s console entry and signal themselves at a chosen moment (a module's
import, a function's call or return, a rename), and the one way the signal tests run them: a signal
from outside cannot aim at a moment, these can."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]


def console_script(hook: str, sighup: str = "SIG_DFL", end: str = "sys.exit(main(sys.argv[1:]))") -> str:
    """`hook` (its arguments popped from argv) set before `npu_worker.cli` is imported, then `end`.
    SIGHUP at its default as from a terminal (also when the suite runs under nohup), or `SIG_IGN` as
    under nohup."""
    return (
        f"import os, signal, sys\nsignal.signal(signal.SIGHUP, signal.{sighup})\n"
        f"{hook}from npu_worker.cli import main\n{end}\n"
    )


# SIGNAL sent by the process to itself the moment it imports MODULE.
IMPORTING_HOOK = """
module, signame, sent = sys.argv.pop(1), sys.argv.pop(1), []
def hook(event, args):
    if event == "import" and args[0] == module and not sent:
        sent.append(True)
        os.kill(os.getpid(), getattr(signal, signame))
sys.addaudithook(hook)
"""
SIGNALLED_IMPORTING = console_script(IMPORTING_HOOK)

# SIGNAL sent by the process to itself the moment FUNCTION is first called (for a command's handler:
# once the command line's own handlers are put back).
_CALLING = """
function, signame = sys.argv.pop(1), sys.argv.pop(1)
def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == function:
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
"""
SIGNALLED_CALLING = console_script(_CALLING)
SIGNALLED_CALLING_UNDER_NOHUP = console_script(_CALLING, sighup="SIG_IGN")

# FIRST sent by the process to itself the moment FUNCTION is called, THEN once it has returned (its own
# handling over, the command line's still on: a closed terminal's SIGHUP, then a supervisor's SIGTERM).
SIGNALLED_CALLING_THEN_RETURNING = console_script("""
function, first, then = sys.argv.pop(1), sys.argv.pop(1), sys.argv.pop(1)
def hook(frame, event, arg):
    if frame.f_code.co_name == function and event in ("call", "return"):
        if event == "return":
            sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, first if event == "call" else then))
sys.setprofile(hook)
""")

# SIGNAL sent once FUNCTION has returned (the command's handler: its work over), at the first line run
# in the frame it returned to or the first call made, whichever comes first.
SIGNALLED_RETURNING = console_script(
    """
function, signame, sent = sys.argv.pop(1), sys.argv.pop(1), []
def send(*ignored):
    if not sent:
        sent.append(True)
        sys.settrace(None)
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
def after(frame, event, arg):
    if event == "line":
        send()
    return after
def called(frame, event, arg):
    if event in ("call", "c_call"):
        send()
def hook(frame, event, arg):
    if event == "call" and frame.f_code.co_name == function:
        return returning
def returning(frame, event, arg):
    if event == "return":
        sys.settrace(lambda *untraced: None)  # (on, for the frame returned to alone)
        frame.f_back.f_trace = after
        sys.setprofile(called)
    return returning
sys.settrace(hook)
""",
    end="sys.exit(main())  # as the console script: the process ends with the command",
)

# SIGNAL sent the moment the process first renames a file (`os.replace`: a report written aside).
SIGNALLED_RENAMING = console_script("""
signame = sys.argv.pop(1)
def hook(frame, event, arg):
    if event == "c_call" and getattr(arg, "__module__", None) == "posix" and arg.__name__ == "replace":
        sys.setprofile(None)
        os.kill(os.getpid(), getattr(signal, signame))
sys.setprofile(hook)
""")


def run_script(
    script: str, *words: str, timeout: float = 60, **options: Any
) -> subprocess.CompletedProcess[str]:
    """`script` run with `words` as its argv, from the repository's root; its output as text."""
    return subprocess.run(
        [sys.executable, "-c", script, *words],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        **options,
    )


def serve_words(tmp_path: Path) -> list[str]:
    """`serve` on a free port with its state dir and output root under `tmp_path`."""
    return ["serve", "--port", "0", "--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)]


def tokenless_env() -> dict[str, str]:
    """This environment with the repository importable and no `NPU_WORKER_TOKEN`: a worker that asks
    for none, and a client that sends none."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NPU_WORKER_TOKEN", None)
    return env


def run_client(script: str, *words: str) -> subprocess.CompletedProcess[str]:
    """`script` run as `run_script` does, with no token, for up to a minute."""
    return run_script(script, *words, timeout=seconds(60), env=tokenless_env())
