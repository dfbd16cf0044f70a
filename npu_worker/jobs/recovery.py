"""Reading the kept jobs back at start-up while the socket already serves.

Every kept job's log is read and folded before the worker can take work: 17 s for 20 000 finished
39-section jobs, 8 s for 1 000 finished 1 000-section ones, during which the socket answered nothing
(`/health` included: a supervisor saw a dead worker). The reading now runs in a thread once the socket
serves, beside the engine's load. Until it ends the worker is loading: `/health` 503 with `load_phase`
saying how far it got, `/ready` 503, and a `Loading` 503 with `Retry-After` for every request that
needs the jobs (a submission would run before the interrupted jobs it must follow; a lookup would miss
a job not read yet).
"""

from __future__ import annotations

import threading

from ..protocol import Loading, WorkerError


class RecoveryStopped(Exception):
    """The worker began to stop before every job was read (they are read again at the next start)."""


class Recovery:
    """Where the reading stands; `progress` is called from the reading thread, the rest on the loop."""

    def __init__(self) -> None:
        self.running = False
        self.done = 0
        self.total: int | None = None
        self.error: WorkerError | None = None  # the kept jobs could not be read at all
        self.stop = threading.Event()

    def progress(self, done: int, total: int) -> None:
        """`JobStore.load_all`'s callback before each job: counts, and gives up once the worker stops."""
        if self.stop.is_set():
            raise RecoveryStopped
        self.done, self.total = done, total

    @property
    def phase(self) -> str | None:
        """What `/health`'s `load_phase` says while the jobs are read."""
        if not self.running:
            return None
        if self.total is None:
            return "reading the kept jobs"
        return f"reading the kept jobs ({self.done} of {self.total})"

    def refusal(self) -> WorkerError:
        return Loading(f"the worker is still {self.phase}; retry shortly")
