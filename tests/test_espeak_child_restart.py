"""A child found dead by a request's write (`ChildGone`) is started again and the request sent once
more; the shutdown's close on another thread meanwhile must end that new child too, never leave it
running after the engine closed (it made the request and stayed until the worker's own exit)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakConfig, create
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.protocol import EngineError
from tests.timing import seconds

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."


def children() -> set[int]:
    """This process's child processes (every thread's), from /proc."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(FileNotFoundError), open(f"/proc/self/task/{task}/children") as listed:
            found.update(int(pid) for pid in listed.read().split())
    return found


def running(pid: int) -> bool:
    """Not reaped, not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_started_again_while_the_engine_closes_is_closed_with_it():
    engine = create(EspeakConfig(process=True))
    assert isinstance(engine, EspeakProcessEngine)
    engine.load()
    dead = engine.child
    os.kill(dead.pid, signal.SIGKILL)  # dies while idle: the next request's write finds it gone
    dead._process.wait(seconds(5))
    known = children()
    outcome: list[object] = []

    def engine_thread() -> None:
        try:
            outcome.append(sum(c.size for c in engine.stream(SynthesisRequest(SENTENCE))))
        except EngineError as error:  # the close came first: the request fails, no child is left
            outcome.append(error)

    thread = threading.Thread(target=engine_thread, daemon=True)
    thread.start()
    started: set[int] = set()
    try:
        deadline = time.monotonic() + seconds(30)
        while not (started := children() - known) and time.monotonic() < deadline:
            time.sleep(0.002)
        assert started, "no child was started again for the request"
        engine.close()  # the shutdown's, while the new child starts (its python and espeak load)
        thread.join(seconds(30))
        assert not thread.is_alive() and len(outcome) == 1
        left = [pid for pid in started if running(pid)]
        assert not left, f"a child started for the request outlived the engine's close: {left}"
    finally:
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_closed_engine_starts_no_child():
    """After the shutdown's close, a request that still reaches the engine fails; no child is started."""
    engine = create(EspeakConfig(process=True))
    engine.load()
    engine.close()
    known = children()
    with pytest.raises(EngineError, match="closed"):
        list(engine.stream(SynthesisRequest(SENTENCE)))
    assert not [pid for pid in children() - known if running(pid)]


def test_a_read_after_the_engine_closed_is_an_engine_error():
    """The shutdown's close (after the drain's grace) while the engine thread hands a chunk on: its
    next read found the pipe closed and the section ended with a bare `ValueError: readinto of
    closed file`, not the engine's own error."""
    engine = create(EspeakConfig(process=True))
    engine.load()
    chunks = engine.stream(SynthesisRequest(SENTENCE * 20))
    assert next(chunks).size
    engine.close()
    with pytest.raises(EngineError, match="closed by the worker"):
        next(chunks)


def test_a_request_longer_than_the_pipe_whose_child_died_mid_write_is_made_by_the_next():
    """The write of a request longer than the child's stdin pipe (`--max-text-chars` raised) fails
    part way (EPIPE) when the child dies meanwhile: the child never acted on the part it had, so the
    whole request goes to the next child, and its audio is the whole text's."""
    engine = create(EspeakConfig(process=True))
    engine.load()
    text = "가나다라." + " " * 200_000 + "마바사."  # ≈ 200 KB of JSON, the pipe 64 KiB; short audio
    try:
        child = engine.child
        os.kill(child.pid, signal.SIGSTOP)  # reads nothing: the write blocks once the pipe is full
        made: list[object] = []

        def engine_thread() -> None:
            try:
                made.append(sum(c.size for c in engine.stream(SynthesisRequest(text))))
            except EngineError as error:
                made.append(error)

        thread = threading.Thread(target=engine_thread, daemon=True)
        thread.start()
        deadline = time.monotonic() + seconds(30)
        while not child._writing.locked() and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)  # (the write is blocked on the full pipe)
        os.kill(child.pid, signal.SIGKILL)
        thread.join(seconds(120))
        assert not thread.is_alive() and engine.child.pid != child.pid
        alone = sum(c.size for c in engine.stream(SynthesisRequest(text)))
        assert made and isinstance(made[0], int) and abs(made[0] - alone) < 0.01 * alone, (made, alone)
    finally:
        engine.close()


def test_the_engines_close_does_not_wait_for_a_child_that_hangs_while_it_starts():
    """A child started again that never says it is ready (stopped, a hung disk under espeak's data):
    the shutdown's close returns at once; the start, once it fails, closes its own child."""
    engine = create(EspeakConfig(process=True))
    engine.load()
    dead = engine.child
    os.kill(dead.pid, signal.SIGKILL)
    dead._process.wait(seconds(5))
    known = children()
    failed: list[Exception] = []

    def engine_thread() -> None:
        try:
            list(engine.stream(SynthesisRequest(SENTENCE)))
        except Exception as error:  # noqa: BLE001 - what the start ended with
            failed.append(error)

    thread = threading.Thread(target=engine_thread, daemon=True)
    thread.start()
    started: set[int] = set()
    closer = threading.Thread(target=engine.close, daemon=True)
    try:
        deadline = time.monotonic() + seconds(30)
        while not (started := children() - known) and time.monotonic() < deadline:
            time.sleep(0.001)
        assert started
        for pid in started:
            os.kill(pid, signal.SIGSTOP)  # before its READY (its python takes ≈ 0.7 s to start)
        closer.start()
        closer.join(seconds(10))
        assert not closer.is_alive(), "the engine's close waited for a child's start that hangs"
    finally:
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    thread.join(seconds(30))
    closer.join(seconds(10))
    assert not thread.is_alive() and len(failed) == 1
