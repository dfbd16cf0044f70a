"""A `STOP`'s deadline that fires as the child answers it: the kill it had decided on landed after the
stopped request had ended and the next had been written, and that next request (answered in time, by a
child that was running) failed with 'did not answer a stop of its request'. The decision and a request's
start are one at a time now: a child killed for an earlier request sends the next one to another."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time

from npu_worker.engine import espeak_process
from npu_worker.engine.base import SynthesisRequest
from tests import espeak_children
from tests.timing import seconds

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."
engine = espeak_children.engine  # the fixture: this module's own loaded espeak child


class AnswerAsTheKillIsDecided(logging.Handler):
    """At the deadline's warning (between its decision and its kill): the stopped child goes on, answers
    the `STOP`, and the engine thread writes the next request before the kill lands."""

    def __init__(self, child: espeak_process.ChildEspeak, stopped: int) -> None:
        super().__init__()
        self.child, self.stopped = child, stopped

    def emit(self, record: logging.LogRecord) -> None:
        if "did not answer a stop" not in record.getMessage():
            return
        os.kill(self.child.pid, signal.SIGCONT)
        deadline = time.monotonic() + seconds(3)  # the next request on this child, or none (sent elsewhere)
        while self.child._live in (None, self.stopped) and time.monotonic() < deadline:
            time.sleep(0.001)


def test_a_stop_deadline_firing_as_the_child_answers_never_fails_the_next_request(engine, monkeypatch):
    monkeypatch.setattr(espeak_process, "STOP_SECONDS", 0.3)
    child = engine.child
    chunks = engine.stream(SynthesisRequest(SENTENCE * 20))
    next(chunks)
    stopped = child._live
    assert stopped is not None
    os.kill(child.pid, signal.SIGSTOP)
    handler = AnswerAsTheKillIsDecided(child, stopped)
    logger = logging.getLogger(espeak_process.__name__)
    logger.addHandler(handler)
    outcome: list[object] = []

    def engine_thread() -> None:
        try:
            assert engine.interrupt(False)  # the cancel's `STOP`: the stopped child holds it unread
            chunks.close()  # the engine thread's drain, up to the child's `END`
            outcome.append(sum(chunk.size for chunk in engine.stream(SynthesisRequest(SENTENCE * 20))))
        except BaseException as error:  # noqa: BLE001 - what the next request ended with
            outcome.append(error)

    thread = threading.Thread(target=engine_thread, daemon=True)
    thread.start()
    thread.join(seconds(20))
    logger.removeHandler(handler)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child.pid, signal.SIGCONT)
    # The killed child ends once the handler above lets its kill go (up to 3 s): it outlived the test and
    # its module, still running when the next file began.
    child._process.wait(seconds(20))
    assert outcome, "the drain or the next request never ended"
    assert isinstance(outcome[0], int) and outcome[0] > 0, outcome[0]
