"""What a load run had measured when it was stopped (Ctrl-C, SIGTERM, SIGHUP): a run of minutes lost
every figure, the requests already answered with the rest, and ended with no report at all."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from npu_worker.bench.measure import RequestRecord
from npu_worker.held_signals import (
    HEARD_AT_START,
    STOPPING,
    StartTerminated,
    how_stopped,
    signals_handled_by,
)

T = TypeVar("T")


@dataclass
class RunSoFar:
    """Filled by `load.run_load` as it goes: `/health` before the run (None: the run had not begun), each
    request as it ends, how many were sent, and which transport and rate was being loaded."""

    health: dict[str, Any] | None = None
    ended: list[tuple[int, RequestRecord]] = field(default_factory=list)  # (its run's number, record)
    sent: int = 0
    runs: int = 0  # runs begun, one per transport and rate
    loading: str = ""

    def begin(self, transport: str, rate: float) -> None:
        self.runs += 1
        self.loading = f"{transport} at {rate:g}/s"

    def waiting_before(self, transport: str, rate: float) -> None:
        """The worker's drain awaited before this run: a stop now named the run before, whose requests
        had all ended, as the one cut."""
        self.loading = (
            f"{transport} at {rate:g}/s (before its first request: waiting for the worker to be idle)"
        )

    def result(self) -> dict[str, Any]:
        """`run_load`'s result of the requests that had ended; `/health` after the run is not asked."""
        ordered = sorted(self.ended, key=lambda ended: (ended[0], ended[1].index))  # as a whole run's
        return {"health": self.health, "health_after": None, "records": [r.to_dict() for _, r in ordered]}

    def why_partial(self, stopped: KeyboardInterrupt) -> str:
        """The report's `interrupted` line: what stopped it, where, and what its figures leave out."""
        cut = self.sent - len(self.ended)
        return (
            f"{how_stopped(stopped)[0].capitalize()} while loading {self.loading}: the figures are of the {len(self.ended)} requests that had"
            f" ended; {cut} in flight were cut and are not counted, and what was still to load was not run"
        )


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, a SIGTERM or SIGHUP heard as asyncio.run hears a Ctrl-C: `main`'s task is
    cancelled, so each request's task ends and every `finally` runs (the run's wav folder removed), then
    StartTerminated is raised. The command line's handler raised it wherever the loop was: inside a
    request's task it ended the loop with the others pending (`Task was destroyed but it is pending!`
    by the hundred, a traceback) and left the wav folder. The first stop is enough: later SIGTERMs and
    SIGHUPs (`timeout` sends two) are ignored from then on, as `held_signals` does at a start."""
    stops: list[int] = []
    try:
        return asyncio.run(_heard(main, stops))
    except asyncio.CancelledError:
        if stops:
            raise StartTerminated(stops[0]) from None
        raise


async def _heard(main: Coroutine[Any, Any, T], stops: list[int]) -> T:
    """`main`, its task cancelled at the first SIGTERM or SIGHUP (not one ignored: `nohup`)."""
    if threading.current_thread() is not threading.main_thread():  # (no handler can be set there)
        return await main
    task, loop = asyncio.current_task(), asyncio.get_running_loop()

    def stop(signum: int, frame: Any) -> None:
        if not stops and task is not None:
            stops.append(signum)
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake the loop's select (asyncio.run does so)

    heard = [signum for signum in HEARD_AT_START if signal.getsignal(signum) is not signal.SIG_IGN]
    before = {signum: signal.signal(signum, stop) for signum in heard}
    try:
        return await main
    finally:
        for signum, handler in before.items():
            signal.signal(signum, signal.SIG_IGN if stops else handler)


@contextlib.contextmanager
def stops_ignored_once_stopped(stopped: KeyboardInterrupt | None) -> Iterator[None]:
    """Once a run was stopped (`stopped`), a Ctrl-C, SIGTERM or SIGHUP meanwhile is ignored: the stopped
    run's report is written as a whole (a second Ctrl-C as it was written left its JSON beside an earlier
    run's markdown, or no markdown). A run that ended is written as before, a stop cutting it short."""
    if stopped is None:
        yield
        return
    with signals_handled_by(lambda signum, frame: None, STOPPING):
        yield
