"""Voice audio decoded at once: a bounded number of threads, the rest wait a bounded time, then a 503.

Decoding a voice upload or an inline `ref_audio` runs in a thread beside the engine, and a small file
costs much CPU for its bytes (10 s of GSM 6.10 at 192 kHz, 390 KB: 0.18 s), so N uploads at once took
N threads. A slot is held until its thread ends, even when the caller has gone (a thread cannot be
stopped): leaving would not free the CPU it still spends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import DecodersBusy

T = TypeVar("T")


class DecodeSlots:
    """At most `slots` decodes at once; a caller finding none free waits up to `wait` seconds for one."""

    def __init__(self, slots: int, wait: float) -> None:
        self._free = asyncio.Semaphore(slots)
        self.slots, self.wait = slots, wait

    async def run(self, decode: Callable[..., T], *args: object) -> T:
        """`decode(*args)` in a thread once a slot is free; DecodersBusy (503) after `wait` seconds."""
        try:  # (a free slot is taken at once: wait_for with 0 s times out before a task could run)
            await (
                asyncio.wait_for(self._free.acquire(), self.wait)
                if self._free.locked()
                else self._free.acquire()
            )
        except TimeoutError:
            raise DecodersBusy(
                f"the worker decodes {self.slots} voice audio file(s) at once and none ended within "
                f"{self.wait:g} s; retry shortly"
            ) from None
        try:
            running = asyncio.ensure_future(asyncio.to_thread(decode, *args))
        except BaseException:
            self._free.release()
            raise
        running.add_done_callback(self._ended)
        return await asyncio.shield(running)  # a caller gone leaves the slot held until the thread ends

    def _ended(self, running: asyncio.Future[Any]) -> None:
        self._free.release()
        if not running.cancelled():
            running.exception()  # retrieved: a caller gone would leave "never retrieved" in the log
