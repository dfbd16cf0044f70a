"""A waiting reader that takes its items itself at the end of the hand-off's drain (`Subscription.direct`,
`loop_handoff.after_this_drain`): the `/ws` pump writes a hand-over in the drain's own turn of the loop
instead of its task's next one (benchmarks/SERVER_OVERHEAD.md, stop 52)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from npu_worker.jobs.loop_handoff import LoopHandoff
from npu_worker.jobs.model import AudioChunk, Job, LogEntry, Section
from npu_worker.jobs.subscription import Subscription
from npu_worker.protocol import Progress, SynthParams


def a_job() -> Job:
    return Job("job-1", SynthParams(), [Section(0, "x", None)])


async def hand_over_from_a_thread(handoff: LoopHandoff, job: Job, items: list[object]) -> None:
    """The engine thread's way: each item through the hand-off, from another thread, one drain."""

    def engine() -> None:
        for item in items:
            if isinstance(item, AudioChunk):
                handoff.with_next(job.publish_audio, item)
            else:
                handoff.with_next(job.publish, item)
        handoff(lambda _: None, None)  # the call that wakes the loop for them all

    thread = threading.Thread(target=engine)
    thread.start()
    await asyncio.to_thread(thread.join)


async def test_a_waiting_reader_takes_a_drain_s_items_in_that_drain_and_is_not_woken():
    loop = asyncio.get_running_loop()
    handoff = LoopHandoff(loop)
    job = a_job()
    subscription = Subscription(job, audio=True, sample_rate=1, max_buffered_seconds=1000)
    taken: list[object] = []
    woken_turns: list[str] = []

    def direct() -> bool:
        # Within the drain's turn: the callback the drain's first item scheduled has not run yet.
        woken_turns.append("direct" if not marker_ran else "after")
        while (item := subscription.ready()) is not None:
            taken.append(item)
        return True

    marker_ran = False

    def mark(_: object) -> None:
        nonlocal marker_ran
        marker_ran = True

    subscription.direct = direct
    waiting = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)  # the reader waits on an empty subscription
    entry = LogEntry(1, Progress(0, "synth"))
    chunk = AudioChunk(0, np.zeros(4, dtype=np.float32))
    # the first callback of the drain schedules `mark` for the loop's next turn
    handoff.with_next(lambda _: loop.call_soon(mark, None), None)
    await hand_over_from_a_thread(handoff, job, [entry, chunk])
    await asyncio.sleep(0.05)
    assert taken == [entry, chunk] and woken_turns == ["direct"]
    assert not waiting.done()  # the reader took everything itself: nothing woke its task
    assert subscription.buffered_samples == 0
    waiting.cancel()


async def test_a_reader_that_declines_is_woken_and_one_that_fails_raises_where_it_waits():
    loop = asyncio.get_running_loop()
    handoff = LoopHandoff(loop)
    job = a_job()
    subscription = Subscription(job)
    subscription.direct = lambda: False  # (a paused peer, a send in flight: the pump writes)
    waiting = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)
    entry = LogEntry(1, Progress(0, "synth"))
    await hand_over_from_a_thread(handoff, job, [entry])
    assert await asyncio.wait_for(waiting, 5) == entry

    def failing() -> bool:
        raise ValueError("the reader's own failure")

    subscription.direct = failing
    waiting = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)
    await hand_over_from_a_thread(handoff, job, [LogEntry(2, Progress(0, "ok"))])
    with pytest.raises(ValueError, match="the reader's own failure"):
        await asyncio.wait_for(waiting, 5)


async def test_a_push_outside_a_drain_wakes_the_reader_as_before():
    job = a_job()
    subscription = Subscription(job)
    calls: list[int] = []
    subscription.direct = lambda: bool(calls.append(1))
    waiting = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)
    entry = LogEntry(1, Progress(0, "synth"))
    job.publish(entry)  # on the loop, no drain running (a cluster stream's reader)
    assert await asyncio.wait_for(waiting, 5) == entry
    assert calls == []


async def test_a_parked_reader_is_told_once_when_its_direct_write_stops_and_then_waits_no_more():
    """`park` (the `/ws` pump with no task): `on_wake` runs once, with the direct write's failure or
    None, and the subscription is free for a reader's `async for` (the pump's task) at once."""
    handoff = LoopHandoff(asyncio.get_running_loop())
    job = a_job()
    subscription = Subscription(job)
    told: list[Exception | None] = []
    answers = [True, False]
    subscription.direct = lambda: bool(subscription.ready()) and answers.pop(0)
    subscription.park(told.append)
    with pytest.raises(RuntimeError, match="one reader"):
        subscription.park(told.append)
    await hand_over_from_a_thread(handoff, job, [LogEntry(1, Progress(0, "synth"))])
    assert told == []  # taken whole: parked still
    await hand_over_from_a_thread(handoff, job, [LogEntry(2, Progress(0, "ok"))])
    assert told == [None]  # declined: told, and parked no more
    third = LogEntry(3, Progress(0, "synth"))
    await hand_over_from_a_thread(handoff, job, [third])
    assert told == [None]
    assert await asyncio.wait_for(subscription.__anext__(), 5) == third  # no "one reader" refusal

    failure = ValueError("the direct write's own")
    subscription.direct = lambda: (_ for _ in ()).throw(failure)
    subscription.park(told.append)
    await hand_over_from_a_thread(handoff, job, [LogEntry(4, Progress(0, "ok"))])
    assert told == [None, failure]


async def test_a_parked_reader_is_told_of_an_end_outside_a_drain_and_not_once_unparked():
    job = a_job()
    subscription = Subscription(job)
    subscription.direct = lambda: True
    told: list[Exception | None] = []
    subscription.park(told.append)
    subscription.finish()  # (the shutdown; an engine that failed to load): no drain runs
    assert told == [None]

    other = Subscription(a_job())
    other.direct = lambda: True
    other.park(told.append)
    other.unpark()  # (the pump ends itself: its socket closed)
    other.close()
    assert told == [None]
