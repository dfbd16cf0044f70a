"""The espeak-ng child of `npu-worker serve`'s engine, started before the server's modules load.

A child's own start (an interpreter, numpy, the Korean reader, espeak-ng's voice data) began only once
the worker had imported aiohttp and the app and the engine's load asked for it: the two starts ran one
after the other, and a ready `/health` waited for both. Started here, the child loads on the other core
while the worker imports; the engine's first load takes it (`take`) instead of starting one, and still
waits for its `READY`, so `/health` says loaded no sooner than before it could serve.

Light on purpose (`subprocess`, `sys`, `threading`): it runs before anything heavy is imported.
"""

from __future__ import annotations

import subprocess
import sys
import threading

CHILD_MODULE = "npu_worker.engine.espeak_child"
DISCARD_SECONDS = 2.0  # a child not taken that has not exited by then (its stdin closed) is killed

_early: subprocess.Popen[bytes] | None = None
_lock = threading.Lock()  # `take` (an engine thread) against `discard` (the command's end)


def spawn() -> subprocess.Popen[bytes]:
    """A new child, its frames on its stdin and stdout (OSError if it cannot be started). In a process
    group of its own: a terminal's Ctrl-C (SIGINT to the worker's group) reached a child still importing,
    before it ignores the signal, and its KeyboardInterrupt traceback joined the worker's one-line
    "interrupted before it began" (the child started early imports just when the worker does). Its life
    is its stdin's, which ends with the worker whatever signal ends that."""
    # -P: the working directory (perhaps world-writable) is not put on the child's import path
    command = [sys.executable, "-P", "-m", CHILD_MODULE]
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, process_group=0
    )


def start_early() -> None:
    """Start the child for the engine's first load now. One that cannot be started is left for that
    load to start again, and to report (`ModelLoadError`), as before."""
    global _early
    with _lock:
        if _early is not None:
            return
        try:
            _early = spawn()
        except OSError:
            pass


def take() -> subprocess.Popen[bytes] | None:
    """The child started early, once; None when there is none (any later engine starts its own)."""
    global _early
    with _lock:
        taken, _early = _early, None
    return taken


def discard() -> None:
    """End a child started early that no engine took (the start was refused after it, a test's
    serve): its stdin's end makes it exit."""
    child = take()
    if child is None:
        return
    close_pipes(child)
    try:
        child.wait(DISCARD_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def close_pipes(child: subprocess.Popen[bytes]) -> None:
    """Its stdin's end is its end (`espeak_child`); the worker's ends of both pipes are let go."""
    for pipe in (child.stdin, child.stdout):
        if pipe is not None:
            pipe.close()
