"""A decode slot is held until its thread ends, even when its caller has gone: a thread cannot be
stopped, so a caller that hung up at once must not free a slot whose decode still spends the CPU.
A caller waiting for a slot holds its audio's bytes in the worker's body budget (real `BodyBudget`)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from npu_worker import body_budget
from npu_worker.body_budget import SLOW_BODY_SECONDS, BodyBudget
from npu_worker.decode_slots import DecodeSlots
from npu_worker.errors import BodyBudgetFull, DecodersBusy


@pytest.fixture
def never_slow(monkeypatch):
    """No held bytes grow old enough to drop: a test that reads the budget a moment after a wait began
    found the wait dropped on a box that let more than SLOW_BODY_SECONDS pass before it looked (CI at load
    23: no `BodyBudgetFull`, the arriving body took the wait's room)."""
    monkeypatch.setattr(body_budget, "SLOW_BODY_SECONDS", 3600.0)


@pytest.fixture
async def go_on():
    """What lets a held decode (`go_on.wait`, up to 30 s) end, set at teardown whatever the test did: a
    test that failed before its own `set` left the thread waiting, and the loop's close waited 29.7 s for
    it before the failure was shown. (Async: torn down in the test's loop, before it closes.)"""
    event = threading.Event()
    yield event
    event.set()


async def test_a_caller_gone_keeps_its_slot_until_the_decode_ends(go_on):
    slots = DecodeSlots(1, 0.0, BodyBudget(1000))
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    await asyncio.sleep(0.05)  # (the thread has started)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    with pytest.raises(DecodersBusy, match="decodes 1 voice audio file"):
        await slots.run(len, b"", holding=0)  # the cancelled caller's decode still runs
    go_on.set()
    for _ in range(200):  # the slot comes back when its thread ends
        try:
            assert await slots.run(len, b"abc", holding=0) == 3
            break
        except DecodersBusy:
            await asyncio.sleep(0.01)
    else:
        raise AssertionError("the slot never came back")


async def test_a_caller_waits_for_a_slot_within_the_wait(go_on):
    slots = DecodeSlots(1, 30.0, BodyBudget(1000))
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    second = asyncio.create_task(slots.run(len, b"ab", holding=0))
    await asyncio.sleep(0.05)
    assert not second.done()
    go_on.set()
    assert await first is True and await second == 2


async def test_a_decode_error_reaches_its_caller_and_frees_the_slot():
    slots = DecodeSlots(1, 0.0, BodyBudget(1000))
    with pytest.raises(ValueError, match="not audio"):
        await slots.run(_refuse, holding=0)
    assert await slots.run(len, b"", holding=0) == 0


def _refuse() -> None:
    raise ValueError("not audio")


async def test_a_caller_waiting_for_a_slot_holds_its_bytes_in_the_body_budget(never_slow, go_on):
    budget = BodyBudget(1000)
    slots = DecodeSlots(1, 30.0, budget)
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=700))
    second = asyncio.create_task(slots.run(len, b"ab", holding=600))
    await asyncio.sleep(0.05)
    assert budget.held == 600  # the waiting caller's; the decoding one's are its thread's
    with pytest.raises(BodyBudgetFull):  # a body arriving now finds no room for 500 more
        budget.hold(print).grow(500)
    go_on.set()
    assert await first is True and await second == 2
    assert budget.held == 0


async def test_a_wait_finding_no_room_in_the_budget_is_refused_at_once(never_slow, go_on):
    budget = BodyBudget(1000)
    slots = DecodeSlots(1, 30.0, budget)
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    await asyncio.sleep(0.05)
    arriving = budget.hold(print)
    arriving.grow(600)  # a body being received
    with pytest.raises(BodyBudgetFull, match="holds 600 bytes"):
        await asyncio.wait_for(slots.run(len, b"ab", holding=600), 5)
    arriving.release()
    go_on.set()
    assert await first is True
    assert await slots.run(len, b"abc", holding=600) == 3 and budget.held == 0  # no slot was lost


async def test_a_long_wait_is_dropped_to_make_room_for_a_body_arriving(go_on):
    budget = BodyBudget(1000)
    slots = DecodeSlots(1, 30.0, budget)
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    second = asyncio.create_task(slots.run(len, b"ab", holding=600))
    await asyncio.sleep(SLOW_BODY_SECONDS + 0.1)  # waiting as long as a slow body may be dropped after
    budget.hold(print).grow(500)  # room made by dropping the wait
    with pytest.raises(BodyBudgetFull, match="waited for a voice-decode slot holding 600 bytes"):
        await second
    assert budget.held == 500 and budget.dropped == 1
    go_on.set()
    assert await first is True
    assert await slots.run(len, b"abc", holding=0) == 3  # the dropped wait took no slot


async def test_a_waiting_caller_gone_frees_its_bytes_and_takes_no_slot(go_on):
    budget = BodyBudget(1000)
    slots = DecodeSlots(1, 30.0, budget)
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    second = asyncio.create_task(slots.run(len, b"ab", holding=600))
    await asyncio.sleep(0.05)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert budget.held == 0
    go_on.set()
    assert await first is True
    assert await slots.run(len, b"abc", holding=0) == 3


async def test_a_later_wait_does_not_drop_an_earlier_one_to_find_room(go_on):
    """A wait finding no room dropped the wait before it in line (once that had waited 1 s), as a body
    arriving does: the bytes of both are in memory whichever is refused, so the head of the line lost its
    place to the tail, and uploads sent one after another kept every wait from reaching a slot."""
    budget = BodyBudget(1000)
    slots = DecodeSlots(1, 30.0, budget)
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    second = asyncio.create_task(slots.run(len, b"ab", holding=600))
    await asyncio.sleep(SLOW_BODY_SECONDS + 0.1)  # as long as a slow body may be dropped after
    with pytest.raises(BodyBudgetFull, match="holds 600 bytes"):  # the later one is refused
        await asyncio.wait_for(slots.run(len, b"abc", holding=600), 5)
    assert not second.done() and budget.dropped == 0
    go_on.set()
    assert await first is True and await second == 2 and budget.held == 0


async def test_a_wait_whose_caller_has_gone_ends_and_takes_no_slot(go_on):
    budget = BodyBudget(1000)
    slots = DecodeSlots(1, 30.0, budget)
    first = asyncio.create_task(slots.run(go_on.wait, 30, holding=0))
    await asyncio.sleep(0.05)
    hung_up = asyncio.Event()
    second = asyncio.create_task(slots.run(len, b"ab", holding=600, gone=hung_up.wait))
    await asyncio.sleep(0.05)
    assert budget.held == 600 and not second.done()
    hung_up.set()
    with pytest.raises(ConnectionResetError, match="hung up"):
        await asyncio.wait_for(second, 5)
    assert budget.held == 0 and not first.done()
    go_on.set()
    assert await first is True
    assert await slots.run(len, b"abc", holding=0, gone=hung_up.wait) == 3  # a free slot: no wait at all
