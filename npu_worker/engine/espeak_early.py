"""The espeak-ng child of `npu-worker serve`'s engine, started before the server's modules load.

A child's own start (an interpreter, numpy, the Korean reader, espeak-ng's voice data) began only once
the worker had imported aiohttp and the app and the engine's load asked for it: the two starts ran one
after the other, and a ready `/health` waited for both. Started here, the child loads on the other core
while the worker imports; the engine's first load takes it (`take`) instead of starting one, and still
waits for its `READY`, so `/health` says loaded no sooner than before it could serve.

Every espeak child is started here (`spawn`), and on one thread that lives as long as the worker: a
child is SIGKILLed when the thread that started it ends (`espeak_child_start`), so one started on an
engine thread or an executor's would have died with that thread.

Light on purpose (`os`, `queue`, `subprocess`, `sys`, `threading`): it runs before anything heavy is
imported.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import Future

CHILD_MODULE = "npu_worker.engine.espeak_child_start"
DISCARD_SECONDS = 2.0  # a child not taken that has not exited by then (its stdin closed) is killed

_early: subprocess.Popen[bytes] | None = None
_lock = threading.Lock()  # `take` (an engine thread) against `discard` (the command's end)


_spawns: queue.SimpleQueue[Future[subprocess.Popen[bytes]]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None
_spawner_lock = threading.Lock()


def spawn() -> subprocess.Popen[bytes]:
    """A new child, its frames on its stdin and stdout (OSError if it cannot be started). In a process
    group of its own: a terminal's Ctrl-C (SIGINT to the worker's group) reached a child still importing,
    before it ignores the signal, and its KeyboardInterrupt traceback joined the worker's one-line
    "interrupted before it began" (the child started early imports just when the worker does). Its life
    is its stdin's, which ends with the worker whatever signal ends that, and at most the worker's: the
    kernel SIGKILLs it when the worker ends (a child stopped then never read its stdin's end)."""
    global _spawner
    started: Future[subprocess.Popen[bytes]] = Future()
    with _spawner_lock:
        if _spawner is None or not _spawner.is_alive():  # (none yet, or a forked process's copy)
            _spawner = threading.Thread(target=_start_children, name="espeak-spawner", daemon=True)
            _spawner.start()
        _spawns.put(started)
    return started.result()


def _start_children() -> None:
    """The spawner thread: never ends (a daemon), so no child is killed before the worker's end."""
    while True:
        started = _spawns.get()
        # -P: the working directory (perhaps world-writable) is not put on the child's import path
        command = [sys.executable, "-P", "-m", CHILD_MODULE, str(os.getpid())]
        try:
            started.set_result(
                subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, process_group=0
                )
            )
        except BaseException as error:  # the caller's to report (OSError: `ModelLoadError`)
            started.set_exception(error)


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
