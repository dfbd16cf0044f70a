"""The hand-off's `later` windows take no turn of the loop that finds nothing (issue 25, stop 53): a
window whose chunks a plain drain already ran, and one opened by a drain that ran a stream's `done`,
had their timers fire into an empty drain. Real loops, no mocks; the timers are counted as they fire."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from npu_worker.jobs.loop_handoff import LoopHandoff
from tests.timing import seconds, until


class CountedTimers(LoopHandoff):
    """A real handoff that notes each window timer that fires."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.timers_fired = 0

    def _timer_drain(self) -> None:
        self.timers_fired += 1
        super()._timer_drain()


async def test_a_window_whose_chunks_a_plain_drain_ran_fires_no_timer():
    """A preview's last urgent chunk opens a window, a later chunk joins it, then a plain call (the next
    request's `start`, another job's event) drains both at once: the window's timer had still fired."""
    handoff = CountedTimers(asyncio.get_running_loop())
    window = seconds(0.2)
    ran: list[int] = []
    opened = asyncio.Event()

    def first(n: int) -> None:
        ran.append(n)
        opened.set()

    handoff.then_later(first, 1, within=window)
    await opened.wait()  # its drain has armed the window
    handoff.later(ran.append, 2, within=window)  # joins it
    handoff(ran.append, 3)  # a plain call: its drain, at the loop's next turn, runs 2 and 3
    await until(lambda: ran == [1, 2, 3], "the plain drain")
    await asyncio.sleep(window + 0.1)
    assert ran == [1, 2, 3]
    assert handoff.timers_fired == 0


async def test_a_drain_that_ran_a_stream_s_done_opens_no_window():
    """A preview's last urgent chunk, its later chunks and its `done` in one drain: the window the
    urgent chunk asked for would find nothing. A later call after it still runs within its own time."""
    handoff = CountedTimers(asyncio.get_running_loop())
    window = seconds(0.2)
    ran: list[Any] = []
    handoff.then_later(ran.append, 1, within=window)
    handoff.later(ran.append, 2, within=window)
    handoff.soon(ran.append, "done", last=True)
    await until(lambda: ran == [1, 2, "done"], "the drain")
    await asyncio.sleep(window + 0.1)
    assert handoff.timers_fired == 0
    handoff.later(ran.append, 3, within=0.01)  # another stream's chunk: a window of its own
    await until(lambda: len(ran) == 4, "the later chunk")
    assert ran == [1, 2, "done", 3]
    assert handoff.timers_fired == 1


async def test_a_done_that_joins_an_open_window_waits_in_it_as_before():
    """`last` changes no event's time: a `done` handed over while a window is due runs with it."""
    handoff = CountedTimers(asyncio.get_running_loop())
    ran: list[Any] = []
    handoff.later(ran.append, 1, within=seconds(0.05))
    handoff.soon(ran.append, "done", last=True)
    assert ran == []
    await until(lambda: ran == [1, "done"], "the window")
    assert handoff.timers_fired == 1


async def test_a_window_a_lane_woke_the_loop_to_arm_is_drained_then_when_its_done_has_joined():
    """A lane's later chunk woke the loop to arm a window, and the stream's `done` joined it before the
    loop took that wake-up: nothing more will come, so the arm's turn drains them, in order; the
    window's timer (one more turn) had run them."""
    handoff = CountedTimers(asyncio.get_running_loop())
    ran: list[Any] = []
    lane = threading.Thread(
        target=lambda: (
            handoff.later(ran.append, 1, within=seconds(5)),
            handoff.soon(ran.append, "done", last=True),
        )
    )
    lane.start()
    lane.join()  # (the loop is held here: both are queued before it takes the arm's wake-up)
    for _ in range(3):
        await asyncio.sleep(0)  # the loop's next turns: the arm's wake-up runs
    assert ran == [1, "done"]
    assert handoff.timers_fired == 0
    handoff.later(ran.append, 2, within=0.01)  # another stream's chunk: a window of its own
    await until(lambda: len(ran) == 3, "the later chunk")
    assert ran == [1, "done", 2]


async def test_a_window_whose_time_passed_before_the_loop_took_its_arm_is_drained_in_that_turn():
    """A lane's later chunk woke the loop to arm a window, and the loop took that wake-up only after the
    window's time had passed (a busy loop): the chunk had waited the window's time again for the timer."""
    handoff = CountedTimers(asyncio.get_running_loop())
    window = 0.01
    ran: list[Any] = []
    lane = threading.Thread(
        target=lambda: (handoff.later(ran.append, 1, within=window), time.sleep(window + 0.04))
    )
    lane.start()
    lane.join()  # (the loop is held here past the window's time)
    for _ in range(3):
        await asyncio.sleep(0)  # the loop's next turns: the arm's wake-up runs
    assert ran == [1]
    assert handoff.timers_fired == 0


async def test_a_window_a_lane_woke_the_loop_to_arm_late_keeps_its_first_later_call_s_time():
    """`later`'s bound: its chunk runs "at the latest `within` after the first such call". A lane's arm
    that the loop took part of the window's time late armed the timer for the whole `within` from that
    turn: the chunk waited past the bound by as long as the loop took to wake. (Not a speed assertion:
    the timer's due time on the loop's own clock, `time.monotonic`, against the call's.)"""
    handoff = CountedTimers(asyncio.get_running_loop())
    assert asyncio.get_running_loop().time.__func__ is asyncio.BaseEventLoop.time  # (monotonic's clock)
    window, held = 1.0, 0.2  # (the loop has 0.8 s left to take the arm: a loaded VM may stall it)
    ran: list[Any] = []
    returned: list[float] = []
    lane = threading.Thread(
        target=lambda: (
            handoff.later(ran.append, 1, within=window),
            returned.append(time.monotonic()),
            time.sleep(held),
        )
    )
    lane.start()
    lane.join()  # (the loop is held here for `held` of the window's time)
    for _ in range(3):
        await asyncio.sleep(0)  # the loop's next turns: the arm's wake-up runs
    timer = handoff._timer
    assert ran == [] and timer is not None
    assert timer.when() < returned[0] + window + held / 2, (timer.when() - returned[0], window)
    await until(lambda: ran == [1], "the window")
    assert handoff.timers_fired == 1
