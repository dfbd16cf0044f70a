"""A later-audio window a lane holds (issue 25, stop 58) at a request stopped early (a cancel): the
child's reader drains what the child sent before its `STOP`, reads that block on the pipe as any
other, and the lane hands the window to the loop before them too. It held the window until the
request's end (`stop_holding`), so the chunks of the window, and whatever other streams' chunks and
events had joined it, waited for the drain: the child's answer to the `STOP` (its hold, up to 10 ms),
and with a stopped child the `STOP`'s 2 s deadline, past `later`'s 3 ms. A real loop, lane thread
and espeak-ng child, stopped with SIGSTOP while the drain waits on it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading

import numpy as np

from npu_worker.engine.base import SynthesisRequest
from npu_worker.jobs.audio_handover import LATER_AUDIO_SECONDS
from npu_worker.jobs.loop_handoff import LoopHandoff
from tests import espeak_children
from tests.timing import until

engine = espeak_children.engine  # the fixture: this module's own loaded espeak child

LONG_TEXT = "오늘은 음성 합성에 대해 이야기합니다. " * 40  # (the child is still making it at the first chunk)


async def test_a_window_held_at_a_cancel_goes_to_the_loop_before_the_stop_s_drain_waits(engine):
    """The lane's sink opens a held window and stops the request (a cancel) with the child stopped:
    the window is drained while the lane still waits in the stop's drain, not once it has ended."""
    handoff = LoopHandoff(asyncio.get_running_loop())
    child = engine.child
    inside = True  # the lane is still in `stream_into` (the stop's drain)
    seen_inside: list[bool] = []
    stopped = threading.Event()

    def sink(chunk: np.ndarray) -> bool:
        handoff.later(lambda _: seen_inside.append(inside), None, LATER_AUDIO_SECONDS)
        os.kill(child.pid, signal.SIGSTOP)  # (the drain's read waits on it: its END cannot come)
        stopped.set()
        return False  # a cancel

    def lane() -> None:
        nonlocal inside
        handoff.hold_for_waits()
        try:
            engine.stream_into(SynthesisRequest(LONG_TEXT, "ko"), sink, handoff.before_wait)
        finally:
            inside = False
            handoff.stop_holding()

    thread = threading.Thread(target=lane)
    thread.start()
    try:
        await until(lambda: seen_inside, "the held window's drain")
        assert seen_inside == [True]  # drained while the lane waited on the stopped child
    finally:
        if stopped.is_set():  # its `END` ends the drain (its `STOP`'s deadline may have killed it)
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGCONT)
        await asyncio.to_thread(thread.join)
    chunks: list[np.ndarray] = []
    engine.stream_into(SynthesisRequest("다음 요청입니다.", "ko"), lambda c: not chunks.append(c))
    assert chunks  # the lane's next request is served as before
