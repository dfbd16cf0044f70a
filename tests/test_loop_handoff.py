"""LoopHandoff: the engine thread's way onto the event loop (real loops and threads, no mocks)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Any

from npu_worker.jobs.loop_handoff import LoopHandoff
from tests.timing import seconds


async def in_thread(function):  # noqa: ANN001, ANN201
    return await asyncio.to_thread(function)


async def test_callbacks_run_on_the_loop_in_the_order_they_were_handed_over():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[tuple[int, bool]] = []
    done = asyncio.Event()
    loop_thread = threading.get_ident()

    def note(n: int) -> None:
        ran.append((n, threading.get_ident() == loop_thread))
        if n == 99:
            done.set()

    await in_thread(lambda: [handoff(note, n) for n in range(100)])
    async with asyncio.timeout(seconds(5)):
        await done.wait()
    assert ran == [(n, True) for n in range(100)]


async def test_yield_to_loop_returns_once_the_loop_ran_what_was_handed_over():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []

    def engine_thread() -> list[int]:
        handoff(ran.append, 1)
        handoff.yield_to_loop(seconds(5))
        return list(ran)  # what the loop had run when the engine thread went on

    assert await in_thread(engine_thread) == [1]


async def test_yield_to_loop_waits_no_longer_than_its_timeout_for_a_loop_that_does_not_run():
    stopped = asyncio.new_event_loop()  # never run: nothing handed to it is ever drained
    try:
        handoff = LoopHandoff(stopped)

        def engine_thread() -> float:
            started = time.monotonic()
            handoff.yield_to_loop(0.05)
            return time.monotonic() - started

        assert 0.04 < await in_thread(engine_thread) < seconds(2)
    finally:
        stopped.close()


async def test_yield_to_loop_on_the_loop_itself_returns_at_once():
    handoff = LoopHandoff(asyncio.get_running_loop())
    started = time.monotonic()
    handoff.yield_to_loop(seconds(5))  # would deadlock if it waited for its own loop
    assert time.monotonic() - started < 0.5


async def test_yield_to_loop_runs_no_python_of_threading_on_the_lane_or_the_loop():
    """Its wait is a plain lock the loop releases, not a `threading.Event`, whose `Condition` ran ≈ 12
    Python calls on the lane and 6 on the loop a preview (benchmarks/SERVER_OVERHEAD.md, stop 59)."""
    loop = asyncio.get_running_loop()
    handoff = LoopHandoff(loop)
    entered: dict[str, list[str]] = {"lane": [], "loop": []}

    def recorder(side: str):  # noqa: ANN202
        def record(frame: Any, event: str, _: object) -> None:
            if event == "call" and frame.f_code.co_filename == threading.__file__:
                entered[side].append(frame.f_code.co_name)

        return record

    ran: list[int] = []
    went_on: asyncio.Future[list[int]] = loop.create_future()
    gate = threading.Lock()
    gate.acquire()

    def lane() -> None:
        gate.acquire()  # (the loop's recorder is set by now: `Thread.start` ran `threading.py`)
        sys.setprofile(recorder("lane"))
        try:
            handoff(ran.append, 1)
            handoff.yield_to_loop(seconds(5))
            seen = list(ran)  # what the loop had run when the lane went on
        finally:
            sys.setprofile(None)
        loop.call_soon_threadsafe(went_on.set_result, seen)

    thread = threading.Thread(target=lane)
    thread.start()
    sys.setprofile(recorder("loop"))
    try:
        gate.release()
        async with asyncio.timeout(seconds(10)):
            assert await went_on == [1]
    finally:
        sys.setprofile(None)
    thread.join()
    assert entered == {"lane": [], "loop": []}


async def test_a_later_call_waits_for_its_time_and_an_ordinary_call_runs_it_first_in_order():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []
    await in_thread(lambda: [handoff.later(ran.append, n, within=60.0) for n in (1, 2)])
    await asyncio.sleep(0.05)
    assert ran == []  # no drain was due: the loop was only told to set a 60 s timer
    await in_thread(lambda: handoff(ran.append, 3))
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 3:
            await asyncio.sleep(0.001)
    assert ran == [1, 2, 3]


async def test_a_later_call_alone_runs_within_its_time_with_those_queued_behind_it():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []
    await in_thread(lambda: [handoff.later(ran.append, n, within=0.01) for n in range(5)])
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 5:
            await asyncio.sleep(0.001)
    assert ran == list(range(5))


async def test_a_call_with_the_next_wakes_nobody_and_runs_before_the_next_call_in_order():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []
    await in_thread(lambda: [handoff.with_next(ran.append, n) for n in (1, 2)])
    await asyncio.sleep(0.05)
    assert ran == []  # nothing asked the loop to drain
    await in_thread(lambda: handoff(ran.append, 3))
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 3:
            await asyncio.sleep(0.001)
    assert ran == [1, 2, 3]


async def test_soon_joins_a_later_window_that_is_due_and_is_a_call_when_none_is():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []
    await in_thread(lambda: (handoff.later(ran.append, 1, within=0.2), handoff.soon(ran.append, 2)))
    await asyncio.sleep(0.05)
    assert ran == []  # it waits with the window's chunk, woke nobody
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 2:
            await asyncio.sleep(0.001)
    assert ran == [1, 2]
    await in_thread(lambda: handoff.soon(ran.append, 3))  # no window: at the loop's next turn
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 3:
            await asyncio.sleep(0.001)
    assert ran == [1, 2, 3]


class ClosingAsItIsWoken(asyncio.SelectorEventLoop):
    """A real loop that the shutdown closes just as another thread wakes it (the race made
    deterministic: open when that thread looked, closed by the time its call lands)."""

    def call_soon_threadsafe(self, *args: Any, **kwargs: Any) -> asyncio.Handle:
        self.close()
        return super().call_soon_threadsafe(*args, **kwargs)


def test_a_loop_closing_as_the_engine_thread_hands_over_raises_nothing_there():
    """The loop's `is_closed` was looked at, then `call_soon_threadsafe` called: a loop closed between
    the two (the worker's end) raised RuntimeError on the engine thread, in the middle of its work."""
    raised: list[BaseException] = []
    for hand_over in ("call", "later"):
        loop = ClosingAsItIsWoken()
        handoff = LoopHandoff(loop)  # built on this thread: the handovers below come from another

        def engine_thread(hand_over: str = hand_over, handoff: LoopHandoff = handoff) -> None:
            try:
                if hand_over == "call":
                    handoff(print, "never printed")
                else:
                    handoff.later(print, "never printed", within=0.01)
            except BaseException as exc:  # noqa: BLE001 - what the engine thread would have met
                raised.append(exc)

        thread = threading.Thread(target=engine_thread)
        thread.start()
        thread.join(seconds(5))
        assert loop.is_closed()
    assert raised == []


class CountedWakes(LoopHandoff):
    """A real handoff that notes each wake-up of the loop it asks for (a write to its self-pipe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.wakes: list[str] = []

    def _wake(self, callback: Any, *arguments: Any) -> None:
        self.wakes.append(callback.__name__)
        super()._wake(callback, *arguments)


async def test_then_later_s_drain_opens_the_window_the_later_calls_join_without_a_wake_up():
    """A preview's last urgent chunk (`then_later`), then the chunks past it (`later`): the window
    they wait in is armed by the urgent chunk's drain, on the loop's turn; the first of them had woken
    the loop only to arm it. They still run within the window's time, in order."""
    handoff = CountedWakes(asyncio.get_running_loop())
    ran: list[int] = []
    await in_thread(lambda: handoff.then_later(ran.append, 1, within=0.2))
    async with asyncio.timeout(seconds(5)):
        while ran != [1]:
            await asyncio.sleep(0.001)
    await in_thread(lambda: [handoff.later(ran.append, n, within=0.2) for n in (2, 3)])
    await in_thread(lambda: handoff.soon(ran.append, 4))  # (a preview's `ok`: it joins too)
    assert ran == [1]
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 4:
            await asyncio.sleep(0.001)
    assert ran == [1, 2, 3, 4]
    assert handoff.wakes == ["_drain"]  # the urgent chunk's; no `_arm_woken`, no wake-up for the `ok`


async def test_a_window_nothing_joins_ends_and_the_next_later_call_opens_its_own():
    handoff = CountedWakes(asyncio.get_running_loop())
    ran: list[int] = []
    await in_thread(lambda: handoff.then_later(ran.append, 1, within=0.01))
    await asyncio.sleep(0.1)  # the window's time passes with nothing in it
    await in_thread(lambda: handoff.later(ran.append, 2, within=0.01))
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 2:
            await asyncio.sleep(0.001)
    assert ran == [1, 2]
    assert handoff.wakes == ["_drain", "_arm_woken"]


async def test_at_once_runs_now_on_an_idle_loop_and_after_what_was_queued_before_it():
    """`at_once` (a job's `start` at admission): now on the loop's thread with nothing queued; after the
    callbacks queued before it, off the loop or not."""
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[str] = []
    handoff.at_once(ran.append, "alone")
    assert ran == ["alone"]  # in this step, no drain
    handoff(ran.append, "queued")
    handoff.at_once(ran.append, "behind")
    assert ran == ["alone"]
    await in_thread(lambda: handoff.at_once(ran.append, "from a thread"))
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 4:
            await asyncio.sleep(0.01)
    assert ran == ["alone", "queued", "behind", "from a thread"]


async def test_at_once_inside_a_drain_runs_after_the_drain_s_callbacks_queued_before_it():
    """A drain takes its callbacks out of the queue before it runs them: one that calls `at_once` found
    the queue empty, and the callback ran ahead of the drain's later ones, queued before it."""
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[str] = []
    handoff(lambda _: handoff.at_once(ran.append, "at once"), None)
    handoff(ran.append, "queued before it")
    async with asyncio.timeout(seconds(5)):
        while len(ran) < 2:
            await asyncio.sleep(0.01)
    assert ran == ["queued before it", "at once"]
