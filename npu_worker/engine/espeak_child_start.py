"""`python -P -m npu_worker.engine.espeak_child_start WORKER_PID`: an espeak child's first lines.

A child's life was its stdin's alone, which closes when the worker ends; a child stopped (SIGSTOP) at
that moment never read the close, and in its own process group (`espeak_early.spawn`) the worker's
group SIGKILL did not reach it either: under a subreaper (a container's init) it stayed stopped for
ever. Here, before anything heavy loads, the kernel is asked to SIGKILL the child when the thread that
started it ends (`PR_SET_PDEATHSIG`; that thread lives as long as the worker, `espeak_early`), and a
child whose worker was already gone by then exits at once.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def end_with(worker_pid: int) -> None:
    """SIGKILL this process when the thread that started it ends; exit now if its worker has ended
    (its parent is no longer `worker_pid`: the signal was asked for too late to come)."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != worker_pid:
        os._exit(0)


if __name__ == "__main__":
    end_with(int(sys.argv[1]))
    from .espeak_child import run_as_main

    run_as_main()
