"""A Redis node's own loops (engine, writer, retention, cancel listener, heartbeat), kept running.

A loop that ends on an exception it did not expect (a bug: its log has the traceback) is the node's
failure while it is down: its beat carries it, so its peers count the node out. It stayed so until the
node was restarted by hand: `/health`'s 500 is no exit, so systemd's `Restart=on-failure` never
restarted it. Now every loop starts again by itself, after a pause that doubles while it keeps ending
(1 s, 2 s, ... 60 s; back to 1 s once it ran a minute), and the failure is lifted as it starts; during
the pause /health, /ready and submissions answer 503 `NodeRestarting` with `Retry-After` (they answered
500 `InternalError`, as for a failure waiting cannot mend). The engine loop too: it was left down until
the node was restarted by hand, as if what it held were unknown; it is what a restarted node finds (the
item it claimed, pending under its name, which it runs first again: the MADE and FINAL scripts drop a
second `ok`), and its engine stays loaded (`EngineNode.run`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from ...protocol import NodeRestarting, WorkerError

FIRST_PAUSE_S = 1.0  # before a loop that ended starts again; doubled each time it ends soon after
MOST_PAUSE_S = 60.0  # the longest pause; a loop that ran this long starts again after FIRST_PAUSE_S

Loop = Callable[[], Coroutine[Any, Any, None]]  # makes the loop's coroutine, each start its own


class NodeLoops:
    """Starts the node's loops through `spawn` (the node's task set, cancelled at its stop) and tells
    `failed` the node's failure (the first loop down, or None) at each change."""

    def __init__(
        self,
        spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]],
        failed: Callable[[WorkerError | None], None],
    ) -> None:
        self._spawn = spawn
        self._failed = failed
        self.first_pause = FIRST_PAUSE_S
        self.stopping = False  # the node stops: a loop that ends now is not started again
        self._down: dict[str, WorkerError] = {}
        self._pauses: dict[str, float] = {}

    def start(self, name: str, loop: Loop) -> None:
        task = self._spawn(loop())
        started = asyncio.get_running_loop().time()
        task.add_done_callback(lambda ended: self._ended(name, loop, ended, started))

    def _ended(self, name: str, loop: Loop, task: asyncio.Task[None], started: float) -> None:
        if task.cancelled() or (exc := task.exception()) is None or self.stopping:
            return
        ended_on = f"this node's {name} loop ended on {type(exc).__name__}"
        ran = asyncio.get_running_loop().time() - started
        pause = self._next_pause(name, ran)
        self._set_down(name, NodeRestarting(f"{ended_on}; it starts again in {pause:g} s (its log has why)"))
        self._spawn(self._start_again(name, loop, pause))

    def _next_pause(self, name: str, ran: float) -> float:
        """FIRST_PAUSE_S, doubled for each end soon after a start, at most MOST_PAUSE_S."""
        earlier = self._pauses.get(name)
        pause = self.first_pause if earlier is None or ran >= MOST_PAUSE_S else min(earlier * 2, MOST_PAUSE_S)
        self._pauses[name] = pause
        return pause

    async def _start_again(self, name: str, loop: Loop, pause: float) -> None:
        await asyncio.sleep(pause)
        if self.stopping:
            return
        self._down.pop(name, None)
        self._failed(next(iter(self._down.values()), None))
        self.start(name, loop)

    def _set_down(self, name: str, failure: WorkerError) -> None:
        self._down[name] = failure
        self._failed(next(iter(self._down.values())))
