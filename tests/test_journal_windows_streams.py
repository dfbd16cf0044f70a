"""The cut of the hand-off's empty window timers (stop 53) with two streams at once: one preview's
`done` (which opens no window) in the same drain as another's last urgent chunk (which asked for one);
the other's later chunks, from a real thread afterwards, still run in order in a window of their own;
a window armed as the loop closes makes no hand-over raise; and `_arm`'s guards (a `later` call whose
wake-up comes after a drain ran it arms no timer, nor a second one), which no test covered."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from npu_worker.jobs.loop_handoff import LoopHandoff
from tests.timing import seconds, until


async def test_another_stream_s_later_chunks_run_after_a_drain_that_ran_a_done():
    """Stream A's `done` and stream B's last urgent chunk share a drain: it opens no window, yet B's
    chunks past it (from the engine thread, after that drain) run with a window of their own."""
    loop = asyncio.get_running_loop()
    handoff = LoopHandoff(loop)
    ran: list[Any] = []
    handoff.then_later(ran.append, "B urgent", within=0.003)
    handoff.soon(ran.append, "A done", last=True)  # queued behind it: the same drain
    await until(lambda: ran == ["B urgent", "A done"], "the shared drain")

    def engine() -> None:
        for n in range(3):
            handoff.later(ran.append, f"B later {n}", within=0.003)

    thread = threading.Thread(target=engine)
    thread.start()
    thread.join(seconds(5))
    await until(lambda: len(ran) == 5, "B's later chunks")
    assert ran == ["B urgent", "A done", "B later 0", "B later 1", "B later 2"]


async def test_a_done_of_one_stream_in_a_window_leaves_the_next_stream_s_window_working():
    """A `done` that joined an armed window: the timer's drain opens none past it, and the next
    `later` (another stream) is still run by a timer of its own, not left waiting for a call."""
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[Any] = []
    handoff.later(ran.append, "A chunk", within=seconds(0.05))
    handoff.soon(ran.append, "A done", last=True)
    await until(lambda: ran == ["A chunk", "A done"], "A's window")
    handoff.later(ran.append, "B chunk", within=seconds(0.05))
    await until(lambda: len(ran) == 3, "B's own window")
    assert ran[-1] == "B chunk"


def test_a_window_open_as_the_loop_closes_raises_nothing_on_the_engine_thread():
    """Shutdown with a window armed: the loop closes, the engine thread's next hand-overs (a later
    chunk, a `done`) are dropped quietly, as a call's were."""
    loop = asyncio.new_event_loop()
    handoff_box: list[LoopHandoff] = []

    async def open_window() -> None:
        handoff = LoopHandoff(loop)
        handoff_box.append(handoff)
        handoff.then_later(lambda _: None, None, within=60.0)
        await asyncio.sleep(0)  # its drain arms the window's timer
        await asyncio.sleep(0)

    loop.run_until_complete(open_window())
    loop.close()
    handoff = handoff_box[0]
    raised: list[BaseException] = []

    def engine() -> None:
        try:
            handoff.later(lambda _: None, None, within=0.003)
            handoff.soon(lambda _: None, None, last=True)
            handoff(lambda _: None, None)
        except BaseException as exc:  # noqa: BLE001 - any raise here is the failure
            raised.append(exc)

    thread = threading.Thread(target=engine)
    thread.start()
    thread.join(seconds(5))
    assert raised == []


class ArmHeldBack(LoopHandoff):
    """A real handoff whose engine thread is held between a `later` call's lock and its wake-up of
    the loop to arm the window (as a preemption there would), the window timers counted as they fire."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.release = threading.Event()
        self.held = threading.Event()
        self.timers_fired = 0
        self.arm_drains = 0  # late arms that found their window due and drained it themselves
        self._arming = False

    def _arm_woken(self) -> None:
        self._arming = True
        try:
            super()._arm_woken()
        finally:
            self._arming = False

    def _drain(self) -> None:
        if self._arming:
            self.arm_drains += 1
        super()._drain()

    def _wake(self, callback: Any, *arguments: Any) -> None:
        if callback == self._arm_woken:
            self.held.set()
            self.release.wait(seconds(5))
        super()._wake(callback, *arguments)

    def _timer_drain(self) -> None:
        self.timers_fired += 1
        super()._timer_drain()


async def _a_later_call_held_before_its_wake_up(handoff: ArmHeldBack, ran: list[Any]) -> threading.Thread:
    thread = threading.Thread(target=handoff.later, args=(ran.append, "later", 0.01))
    thread.start()
    await until(handoff.held.is_set, "the later call held before its wake-up")
    return thread


async def test_an_arm_that_comes_after_a_drain_ran_its_window_arms_no_timer():
    """The engine thread's `later` is held before it wakes the loop to arm; meanwhile a call from the
    loop drains it. The late `_arm` then finds nothing due: it had armed a timer that fired into nothing."""
    handoff = ArmHeldBack(asyncio.get_running_loop())
    ran: list[Any] = []
    thread = await _a_later_call_held_before_its_wake_up(handoff, ran)
    handoff(ran.append, "call")  # its drain runs the held `later`'s chunk too
    await until(lambda: ran == ["later", "call"], "the call's drain")
    handoff.release.set()
    thread.join(seconds(5))
    await asyncio.sleep(seconds(0.1))
    assert ran == ["later", "call"]
    assert handoff.timers_fired == 0


async def test_a_late_arm_adds_no_second_timer_to_a_window_a_drain_opened():
    """As above, but the loop's drain opens a window of its own (`then_later`): the late `_arm` finds
    that window's timer armed and arms no second one (two had fired, one of them into nothing)."""
    handoff = ArmHeldBack(asyncio.get_running_loop())
    ran: list[Any] = []
    thread = await _a_later_call_held_before_its_wake_up(handoff, ran)
    handoff.then_later(ran.append, "urgent", within=seconds(0.05))
    await until(lambda: ran == ["later", "urgent"], "the drain")
    handoff.release.set()
    thread.join(seconds(5))
    await asyncio.sleep(seconds(0.05) + seconds(0.1))
    # the window nothing joined: one turn, as documented; the timer's, or the late arm's where the
    # loop took it after the window was due (both ready in one loop turn, the arm first)
    assert handoff.timers_fired + handoff.arm_drains == 1
