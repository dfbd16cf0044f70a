"""A cancel stops the espeak child itself, from the cancelling thread (`interrupt`, `stop_running`):
the child held a request's later frames up to 10 ms, and a cancel seen only when they reached the engine
thread freed the lane that much later. The `STOP` names its request, so one that reaches the child
after that request ended (the canceller raced the end) never cuts the next request on that child."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakConfig, create
from npu_worker.engine.espeak_child import REQUEST_ID, STOP, write_frame
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.jobs.admission import Admission, Cancelled
from npu_worker.jobs.model import Job, Section
from npu_worker.protocol import EngineError, SynthParams
from tests import espeak_children
from tests.timing import seconds

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."
LONG_TEXT = SENTENCE * 40  # about two minutes of speech: seconds of espeak's work

engine = espeak_children.engine  # the fixture: this module's own loaded espeak child


def samples(chunks: list[np.ndarray]) -> int:
    return sum(chunk.size for chunk in chunks)


def whole(engine: EspeakProcessEngine, text: str) -> int:
    return samples(list(engine.child.chunks(SynthesisRequest(text))))


def test_a_late_stop_for_a_request_does_not_cut_the_next(engine):
    child = engine.child
    before = child.chunks(SynthesisRequest(SENTENCE))
    next(before)
    earlier = child._live  # what a canceller read as the request in flight
    list(before)  # it ended whole meanwhile
    expected = whole(engine, SENTENCE)
    following = child.chunks(SynthesisRequest(SENTENCE))
    made = [next(following)]
    write_frame(child._requests, STOP, REQUEST_ID.pack(earlier))  # the canceller's write, late
    made += list(following)
    assert abs(samples(made) - expected) < 0.02 * expected  # the next request came whole


def test_a_stop_from_another_thread_ends_the_request_the_engine_thread_waits_on(engine):
    """The engine thread blocks reading the child's pipe (held frames may be 10 ms away); the cancel's
    `interrupt` on another thread stops the child, whose `END` ends the read: no chunk refused."""
    expected = whole(engine, SENTENCE)
    first, taken, ended = threading.Event(), [], threading.Event()

    def engine_thread() -> None:
        for chunk in engine.stream(SynthesisRequest(LONG_TEXT)):
            taken.append(chunk.size)
            first.set()
        ended.set()

    reader = threading.Thread(target=engine_thread)
    reader.start()
    assert first.wait(seconds(10))
    assert engine.interrupt(restart=True) is False  # a call of espeak's is never redone: nothing stopped
    assert engine.interrupt(restart=False) is True
    assert engine.interrupt(restart=False) is False  # one STOP a request: a flood of cancels sends one
    assert ended.wait(seconds(10))
    reader.join()
    assert sum(taken) < 0.2 * whole(engine, LONG_TEXT)  # stopped, not read to the end
    assert abs(whole(engine, SENTENCE) - expected) < 0.02 * expected  # the next request whole
    assert engine.interrupt(restart=False) is False  # no request in flight: nothing written


def test_a_cancel_of_a_preview_lanes_section_stops_that_lanes_child():
    """The admission calls the lane's engine's `interrupt` for a cancel of the section that lane
    took (the engine thread's was the only one it knew): the sink here never refuses a chunk, so
    only the cancel's `STOP` can end the text early."""
    lane = create(EspeakConfig(process=True))
    lane.load()
    try:
        admission = Admission(max_queue=10)
        job = Job("p1", SynthParams(), [Section(0, LONG_TEXT, None)], preview=True, stream_audio=True)
        admission.reserve(job, 1)
        admission.enqueue(job)
        picked = admission.next_preview(lane.interrupt)
        assert picked is not None and picked[0] is job
        first, taken = threading.Event(), []

        def sink(chunk: np.ndarray) -> bool:
            taken.append(chunk.size)
            first.set()
            return True

        making = threading.Thread(target=lane.stream_into, args=(SynthesisRequest(LONG_TEXT), sink))
        making.start()
        assert first.wait(seconds(10))
        assert admission.cancel(job.id) == (Cancelled.RUNNING, job)
        making.join(seconds(10))
        assert not making.is_alive()
        full = samples(list(lane.child.chunks(SynthesisRequest(LONG_TEXT))))
        assert sum(taken) < 0.2 * full
    finally:
        lane.close()


def test_a_stop_after_the_child_closed_writes_nowhere():
    """The pipe's fd number is free once closed (the next file opened may take it): a canceller's
    late `STOP` is not written to the file that took it (here another pipe's write end)."""
    engine = create(EspeakConfig(process=True))
    engine.load()
    child = engine.child
    chunks = child.chunks(SynthesisRequest(LONG_TEXT))
    next(chunks)
    other_read, other_write = os.pipe()  # (opened first: neither end takes the number)
    child.close()
    os.dup2(other_write, child._requests)  # the number reused, as by whatever opens next
    try:
        assert child.stop_running() is False
        os.set_blocking(other_read, False)
        with pytest.raises(BlockingIOError):
            os.read(other_read, 64)  # nothing written there
    finally:
        for fd in (other_read, other_write, child._requests):
            os.close(fd)
    chunks.close()


def test_the_canceller_never_waits_on_a_child_that_stopped_reading(engine):
    """The cancel runs on the event loop: a child that stopped reading its stdin (SIGSTOP, a hung
    host) with the pipe full, or the engine thread mid-write of a request, must not block it. The
    `STOP` is then not sent, and the engine thread's own stop (at its next chunk) still ends the request."""
    child = engine.child
    chunks = child.chunks(SynthesisRequest(LONG_TEXT))
    next(chunks)
    with child._writing:  # the engine thread writing a request: the canceller does not wait for it
        waited: list[bool] = []  # (on another thread: a canceller that waited hung this one for ever)
        canceller = threading.Thread(target=lambda: waited.append(child.stop_running()), daemon=True)
        canceller.start()
        canceller.join(seconds(10))
        assert waited == [False]
    os.kill(child.pid, signal.SIGSTOP)
    try:
        fill = os.dup(child._requests)  # another fd on the same pipe: filled with STOPs for no request
        os.set_blocking(fill, False)
        with contextlib.suppress(BlockingIOError):
            while True:
                write_frame(fill, STOP, REQUEST_ID.pack(0))
        os.set_blocking(fill, True)  # (the flag is the pipe's, shared with the child's fd: put back)
        os.close(fill)
        answered = []
        canceller = threading.Thread(target=lambda: answered.append(engine.interrupt(restart=False)))
        canceller.start()
        canceller.join(seconds(10))
        assert answered == [False]  # answered at once: the pipe was full
    finally:
        os.kill(child.pid, signal.SIGCONT)
    chunks.close()  # the engine thread's stop: sent once the child reads again
    assert child.alive and engine.child is child
    assert whole(engine, SENTENCE) > 1.5 * 24000  # the next request speaks


def test_closing_a_child_ends_a_request_write_stuck_on_its_pipe():
    """A child that stopped reading (SIGSTOP, a hung host) while the engine thread writes it a request
    longer than its stdin pipe holds (`--max-text-chars` raised): the engine thread holds the write
    lock in that write. The shutdown's `close` (another thread, after the drain) waited for that lock
    for ever, and the worker never exited; it kills the child then, which fails the stuck write."""
    engine = create(EspeakConfig(process=True))
    engine.load()
    child = engine.child
    os.kill(child.pid, signal.SIGSTOP)
    failed: list[Exception] = []

    def engine_thread() -> None:
        try:
            list(child.chunks(SynthesisRequest("가" * 100_000)))  # ≈ 300 KB of JSON, the pipe 64 KiB
        except EngineError as error:
            failed.append(error)

    writer = threading.Thread(target=engine_thread, daemon=True)
    writer.start()
    closer = threading.Thread(target=child.close, daemon=True)
    try:
        for _ in range(1000):  # until the write holds the lock (it blocks there at once)
            if child._writing.locked():
                break
            time.sleep(0.01)
        assert child._writing.locked()
        closer.start()
        closer.join(seconds(10))
        assert not closer.is_alive()  # closed, the child killed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGKILL)  # (the code before: free the threads, not leave them)
    writer.join(seconds(10))
    assert not writer.is_alive() and len(failed) == 1 and not child.alive
    engine.close()
