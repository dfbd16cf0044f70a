"""A later-audio window held by a lane that tells its waits (issue 25, stop 58): a batch of espeak-ng's
frames that came after a window's timer woke the loop only to arm a new timer, whose turn then drained
the batch (two turns); the lane now holds the window and hands it to the loop in one drain before it
blocks on its engine, or once `later`'s time has passed, or at the end of its request. Real loops,
threads, workers and an espeak-ng child, no mocks; wake-ups and timers counted as they happen."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from npu_worker.jobs.audio_handover import URGENT_AUDIO_SECONDS
from npu_worker.jobs.loop_handoff import LoopHandoff
from tests import espeak_children
from tests.test_ws_support import batch, connect, receive_until_done
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

engine = espeak_children.engine  # the fixture: this module's own loaded espeak child


class Counted(LoopHandoff):
    """A real handoff that notes its arms, window timers and drains as they run on the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.arms = self.timers_fired = self.drains = 0

    def _arm_woken(self) -> None:
        self.arms += 1
        super()._arm_woken()

    def _timer_drain(self) -> None:
        self.timers_fired += 1
        super()._timer_drain()

    def _drain(self) -> None:
        self.drains += 1
        super()._drain()


def lane(*steps: Any) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """A lane thread that runs `steps` up to a `None`, tells `paused`, waits for `go`, runs the rest."""
    paused, go = threading.Event(), threading.Event()

    def run() -> None:
        for step in steps:
            if step is None:
                paused.set()
                go.wait(seconds(10))
            else:
                step()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, paused, go


async def turns(count: int = 3) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_lane_s_later_chunks_wake_nobody_until_it_waits_then_go_in_one_drain():
    """No arm's wake-up and no timer: the window goes to the loop when the lane tells its wait."""
    handoff = Counted(asyncio.get_running_loop())
    ran: list[int] = []
    within = seconds(5)
    thread, paused, go = lane(
        handoff.hold_for_waits,
        lambda: handoff.later(ran.append, 1, within),
        lambda: handoff.later(ran.append, 2, within),
        None,
        handoff.before_wait,
        handoff.stop_holding,
    )
    assert await asyncio.to_thread(paused.wait, seconds(10))
    await turns()
    assert (ran, handoff.arms, handoff.drains) == ([], 0, 0)  # the loop was not woken (it had armed)
    go.set()
    await until(lambda: ran == [1, 2], "the drain at the lane's wait")
    await asyncio.to_thread(thread.join)
    await turns()
    assert (handoff.arms, handoff.timers_fired, handoff.drains) == (0, 0, 1)
    assert handoff._timer is None


async def test_a_held_window_past_its_time_goes_to_the_loop_at_the_lane_s_next_later_call():
    """`later`'s bound holds on a lane that works on without waiting: its next `later` past the window's
    time hands the window over, before any wait."""
    handoff = Counted(asyncio.get_running_loop())
    ran: list[int] = []
    window = 0.01
    thread, paused, go = lane(
        handoff.hold_for_waits,
        lambda: handoff.later(ran.append, 1, window),
        lambda: time.sleep(window + 0.04),  # the lane's own work (a batch's chunks), no wait told
        lambda: handoff.later(ran.append, 2, window),
        None,
        handoff.stop_holding,
    )
    await until(lambda: ran == [1, 2], "the window past its time")
    assert not go.is_set() and handoff.arms == 0
    go.set()
    await asyncio.to_thread(thread.join)


async def test_a_window_still_held_at_the_lane_s_end_goes_over_as_its_arm():
    """At `stop_holding` a held window goes to the loop as an arm: drained in that turn once its
    stream's `done` has joined it, else by its timer within what is left of its time."""
    handoff = Counted(asyncio.get_running_loop())
    ran: list[Any] = []
    thread, _, _ = lane(
        handoff.hold_for_waits,
        lambda: handoff.later(ran.append, 1, seconds(5)),
        handoff.stop_holding,
        lambda: handoff.soon(ran.append, "done", last=True),
    )
    thread.join()  # (the loop is held here: the `done` has joined before it takes the arm)
    await turns()
    assert ran == [1, "done"] and (handoff.arms, handoff.timers_fired) == (1, 0)
    thread, _, _ = lane(
        handoff.hold_for_waits, lambda: handoff.later(ran.append, 2, seconds(0.5)), handoff.stop_holding
    )
    await until(lambda: len(ran) == 3, "the window's timer")
    await asyncio.to_thread(thread.join)
    assert ran[2] == 2 and (handoff.arms, handoff.timers_fired) == (2, 1)


async def test_a_call_that_drains_a_held_window_leaves_the_lane_s_wait_nothing_to_wake():
    """Another thread's call runs the held chunks in its drain; the lane's wait then wakes nobody."""
    handoff = Counted(asyncio.get_running_loop())
    ran: list[int] = []
    thread, paused, go = lane(
        handoff.hold_for_waits,
        lambda: handoff.later(ran.append, 1, seconds(5)),
        None,
        handoff.before_wait,
        handoff.stop_holding,
    )
    assert await asyncio.to_thread(paused.wait, seconds(10))
    handoff(ran.append, 2)
    await until(lambda: ran == [1, 2], "the call's drain")
    go.set()
    await asyncio.to_thread(thread.join)
    await turns()
    assert (handoff.arms, handoff.timers_fired, handoff.drains) == (0, 0, 1)


async def test_a_lane_s_engine_output_that_comes_within_the_window_joins_it_at_the_wait():
    """At its wait the lane asks its engine whether more comes within the window's time (`readable`,
    the child's pipe polled): it does, and the window stays held for it, as it would have joined the
    window's timer; then it does not, and the window goes to the loop in one drain."""
    handoff = Counted(asyncio.get_running_loop())
    ran: list[int] = []
    within = seconds(5)
    asked: list[float] = []

    def more_comes(seconds_left: float) -> bool:
        asked.append(seconds_left)
        return len(asked) == 1  # (the engine's next batch came within the window, then no more)

    thread, paused, go = lane(
        handoff.hold_for_waits,
        lambda: handoff.later(ran.append, 1, within),
        lambda: handoff.before_wait(more_comes),
        lambda: handoff.later(ran.append, 2, within),
        None,
        lambda: handoff.before_wait(more_comes),
        handoff.stop_holding,
    )
    assert await asyncio.to_thread(paused.wait, seconds(10))
    await turns()
    assert (ran, handoff.drains) == ([], 0) and 0 < asked[0] <= within
    go.set()
    await until(lambda: ran == [1, 2], "the drain at the lane's second wait")
    await asyncio.to_thread(thread.join)
    await turns()
    assert (handoff.arms, handoff.timers_fired, handoff.drains, len(asked)) == (0, 0, 1, 2)


def test_the_espeak_child_s_reader_tells_each_wait_of_a_request_and_no_other(engine):
    """`stream_into`'s `before_wait` is called on the lane before each read that blocks on the child's
    pipe (at least the request's first), never after the request; the chunks are the same."""
    plain: list[bytes] = []
    engine.stream_into(
        SynthesisRequest("오늘은 음성 합성에 대해 이야기합니다.", "ko"),
        lambda c: not plain.append(c.tobytes()),
    )
    events: list[str] = []

    def take(chunk: np.ndarray) -> bool:
        events.append(chunk.tobytes().hex())
        return True

    engine.stream_into(
        SynthesisRequest("오늘은 음성 합성에 대해 이야기합니다.", "ko"),
        take,
        before_wait=lambda readable: events.append("wait" if readable(0.0) in (True, False) else "?"),
    )
    assert events[0] == "wait"
    assert [bytes.fromhex(e) for e in events if e != "wait"] == plain
    assert engine.child._answers.before_wait is None


class BatchedTone(ToneEngine):
    """Hands its chunks over as espeak-ng's child does: the first alone, the rest in batches a pause
    apart (the child's hold), telling the lane before each pause, as the child's reader does."""

    tells_waits = True

    def __init__(self) -> None:
        super().__init__(chunk_seconds=0.1)
        self.pause = 0.03  # longer than a later window: each batch came after the last one's timer
        self.made = threading.Event()  # (never set: no batch is ready while the lane looks)

    def stream_into(self, request: SynthesisRequest, sink: Any, before_wait: Any = None) -> None:
        chunks = list(self.stream(request))
        urgent = round(URGENT_AUDIO_SECONDS / self.chunk_seconds)
        batches = [chunks[:urgent], *(chunks[start : start + 2] for start in range(urgent, len(chunks), 2))]
        for number, chunks_of_batch in enumerate(batches):
            if number and before_wait is not None:
                before_wait(self.made.wait)  # (the next batch comes after the window: never within it)
            if number:
                time.sleep(self.pause)  # (the engine's own time: the child making the next batch)
            for chunk in chunks_of_batch:
                sink(chunk)


async def test_a_preview_s_later_batches_each_go_to_the_loop_at_the_engine_s_wait(worker):
    """A preview's later batches, each after the last window's timer: each woke the loop to arm a
    timer and took the timer's turn; now each goes at the engine's wait, in one drain. The same stream."""
    engine = BatchedTone()
    client = await worker(engine)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    wakes: list[str] = []
    wake = handoff._wake

    def counted(callback: Any, *arguments: Any) -> None:
        wakes.append(callback.__name__)
        wake(callback, *arguments)

    handoff._wake = counted  # type: ignore[method-assign]
    ws = await connect(client)
    text = "가" * 100  # 2 s in 0.1 s chunks: seven later batches of 0.2 s
    try:
        await ws.send_json(batch(text))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()
    assert wakes.count("_arm_woken") <= 1, wakes  # (at most the last batch's, at the request's end)
    expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert transcript.section_pcm(0) == expected
