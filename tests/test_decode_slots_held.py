"""A decode slot is held until its thread ends, even when its caller has gone: a thread cannot be
stopped, so a caller that hung up at once must not free a slot whose decode still spends the CPU."""

from __future__ import annotations

import asyncio
import threading

import pytest

from npu_worker.decode_slots import DecodeSlots
from npu_worker.errors import DecodersBusy


async def test_a_caller_gone_keeps_its_slot_until_the_decode_ends():
    slots, go_on = DecodeSlots(1, 0.0), threading.Event()
    first = asyncio.create_task(slots.run(go_on.wait, 30))
    await asyncio.sleep(0.05)  # (the thread has started)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    with pytest.raises(DecodersBusy, match="decodes 1 voice audio file"):
        await slots.run(len, b"")  # the cancelled caller's decode still runs
    go_on.set()
    for _ in range(200):  # the slot comes back when its thread ends
        try:
            assert await slots.run(len, b"abc") == 3
            break
        except DecodersBusy:
            await asyncio.sleep(0.01)
    else:
        raise AssertionError("the slot never came back")


async def test_a_caller_waits_for_a_slot_within_the_wait():
    slots, go_on = DecodeSlots(1, 30.0), threading.Event()
    first = asyncio.create_task(slots.run(go_on.wait, 30))
    second = asyncio.create_task(slots.run(len, b"ab"))
    await asyncio.sleep(0.05)
    assert not second.done()
    go_on.set()
    assert await first is True and await second == 2


async def test_a_decode_error_reaches_its_caller_and_frees_the_slot():
    slots = DecodeSlots(1, 0.0)
    with pytest.raises(ValueError, match="not audio"):
        await slots.run(_refuse)
    assert await slots.run(len, b"") == 0


def _refuse() -> None:
    raise ValueError("not audio")
