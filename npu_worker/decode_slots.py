"""Voice audio decoded at once: a bounded number of threads, the rest wait a bounded time, then a 503.

Decoding a voice upload or an inline `ref_audio` runs in a thread beside the engine, and a small file
costs much CPU for its bytes (10 s of GSM 6.10 at 192 kHz, 390 KB: 0.18 s), so N uploads at once took
N threads. A slot is held until its thread ends, even when the caller has gone (a thread cannot be
stopped): leaving would not free the CPU it still spends.

A caller waiting for a slot holds its audio's bytes (up to `--voice-max-bytes`) in the body budget
(`body_budget.py`) while it waits: its body had left the budget once read, so connection-cap callers
could each park 5 MiB for the whole wait beyond every bound. A wait finding no room in the budget is
refused at once, and a wait is dropped like a slow body to make room for one arriving (both a 503
`BodyBudgetFull`). A wait whose caller has gone (`gone`) ends then: aiohttp runs a handler on after
its caller hangs up, so the wait held its bytes to its end, then decoded (and stored) for nobody.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .body_budget import BodyBudget
from .errors import BodyBudgetFull, DecodersBusy, WorkerError

T = TypeVar("T")


class DecodeSlots:
    """At most `slots` decodes at once; a caller finding none free waits up to `wait` seconds for one,
    its bytes held in `budget` meanwhile."""

    def __init__(self, slots: int, wait: float, budget: BodyBudget) -> None:
        self._free = asyncio.Semaphore(slots)
        self.slots, self.wait, self.budget = slots, wait, budget

    async def run(
        self,
        decode: Callable[..., T],
        *args: object,
        holding: int,
        gone: Callable[[], Awaitable[object]] | None = None,
    ) -> T:
        """`decode(*args)` in a thread once a slot is free; DecodersBusy (503) after `wait` seconds.
        `holding`: the bytes the caller keeps while it waits (its audio), counted in the body budget;
        `gone()`: ends when the caller has gone (`hang_up.until_caller_gone`): the wait ends with
        ConnectionResetError."""
        if self._free.locked():
            await self._wait_for_slot(holding, gone)
        else:  # (a free slot is taken at once: wait_for with 0 s times out before a task could run)
            await self._free.acquire()
        try:
            running = asyncio.ensure_future(asyncio.to_thread(decode, *args))
        except BaseException:
            self._free.release()
            raise
        running.add_done_callback(self._ended)
        return await asyncio.shield(running)  # a caller gone leaves the slot held until the thread ends

    async def _wait_for_slot(self, holding: int, gone: Callable[[], Awaitable[object]] | None) -> None:
        """A slot taken within `wait`, the caller's bytes held in the budget until then."""
        loop = asyncio.get_running_loop()
        dropped: asyncio.Future[bool] = loop.create_future()
        left: asyncio.Future[object] = asyncio.ensure_future(gone()) if gone else loop.create_future()

        def drop(_error: WorkerError) -> None:  # the budget made room for a body arriving
            if not dropped.done():
                dropped.set_result(True)

        hold = self.budget.hold(drop, in_line=True)  # (not dropped for a later wait: it keeps its place)
        acquired: asyncio.Future[bool] = asyncio.ensure_future(self._free.acquire())
        try:
            hold.grow(holding)  # BodyBudgetFull at once when the budget has no room for it
            ends: set[asyncio.Future[Any]] = {acquired, dropped, left}
            await asyncio.wait(ends, timeout=self.wait, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # refused, or its task cancelled: a slot taken meanwhile is given back
            self._give_up(acquired)
            raise
        finally:
            hold.release()
            hung_up = left.done() and not left.cancelled() and left.exception() is None
            left.cancel()
        if acquired.done() and not dropped.done() and not hung_up:
            return
        self._give_up(acquired)  # (one taken in the same turn as the drop or the hang-up: they win)
        if hung_up:
            raise ConnectionResetError("the caller hung up while it waited for a voice-decode slot")
        if dropped.done():
            raise BodyBudgetFull(
                f"the request waited for a voice-decode slot holding {holding} bytes, dropped to make "
                f"room for bodies arriving (--body-budget-bytes {self.budget.total}); send it again shortly"
            )
        raise DecodersBusy(
            f"the worker decodes {self.slots} voice audio file(s) at once and none ended within "
            f"{self.wait:g} s; retry shortly"
        )

    def _give_up(self, acquired: asyncio.Future[bool]) -> None:
        """The wait `acquired` is for is given up: cancelled, or the slot it took given back."""
        if not acquired.done():
            acquired.cancel()
        elif not acquired.cancelled():
            self._free.release()

    def _ended(self, running: asyncio.Future[Any]) -> None:
        self._free.release()
        if not running.cancelled():
            running.exception()  # retrieved: a caller gone would leave "never retrieved" in the log
