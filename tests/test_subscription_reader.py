"""A subscription's one reader (`jobs/subscription.py`): its items wait in a deque with the reader's
future, not an `asyncio.Queue`; what a reader sees stays what the queue gave it."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from npu_worker.jobs.model import AudioChunk, Job, LogEntry, Section
from npu_worker.jobs.subscription import Subscription
from npu_worker.protocol import Done, Progress, SynthParams


def a_job() -> Job:
    return Job("job-1", SynthParams(), [Section(0, "x", None)])


def done_entry(seq: int) -> LogEntry:
    return LogEntry(seq, Done(total=1, ok_count=1, fail_count=0, elapsed_total_sec=0.1))


async def test_a_waiting_reader_wakes_for_each_item_in_order_and_stops_after_done():
    job = a_job()
    subscription = Subscription(job, audio=True, sample_rate=1, max_buffered_seconds=1000)
    seen: list[object] = []

    async def read() -> None:
        async for item in subscription:
            seen.append(item)

    reader = asyncio.create_task(read())
    await asyncio.sleep(0)  # the reader waits on an empty subscription
    started = LogEntry(1, Progress(0, "synth"))
    job.publish(started)
    await asyncio.sleep(0)
    chunk = AudioChunk(0, np.zeros(4, dtype=np.float32))
    job.publish_audio(chunk)
    job.publish(done_entry(2))
    await asyncio.wait_for(reader, 5)
    assert seen == [started, chunk, done_entry(2)]
    assert subscription.buffered_samples == 0 and subscription not in job.subscribers


async def test_a_reader_cancelled_while_it_waits_leaves_the_subscription_to_the_next_read():
    job = a_job()
    subscription = Subscription(job)
    waiting = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    entry = LogEntry(1, Progress(0, "synth"))
    job.publish(entry)
    assert subscription.holds()
    assert await asyncio.wait_for(subscription.__anext__(), 5) == entry


async def test_ready_takes_what_is_there_and_close_ends_a_waiting_reader():
    job = a_job()
    subscription = Subscription(job)
    assert subscription.ready() is None and not subscription.holds()
    entries = [LogEntry(1, Progress(0, "synth")), LogEntry(2, Progress(0, "ok"))]
    for entry in entries:
        job.publish(entry)
    assert [subscription.ready(), subscription.ready(), subscription.ready()] == [*entries, None]
    waiting = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)
    subscription.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiting, 5)
    with pytest.raises(StopAsyncIteration):  # and every read after
        await subscription.__anext__()


async def test_a_second_reader_while_one_waits_is_refused_and_the_first_still_gets_its_item():
    """One future a subscription: a second reader put its own in the first's place, so the first was
    never woken again, by an item or by `close`, and hung for ever; now the second is refused at once."""
    job = a_job()
    subscription = Subscription(job)
    first = asyncio.create_task(subscription.__anext__())
    await asyncio.sleep(0)  # the first reader waits
    with pytest.raises(RuntimeError, match="one reader"):
        await asyncio.wait_for(subscription.__anext__(), 1)
    entry = LogEntry(1, Progress(0, "synth"))
    job.publish(entry)
    assert await asyncio.wait_for(first, 5) == entry
