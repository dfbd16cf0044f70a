"""An espeak child stopped (SIGSTOP, a hung host) in the middle of a request is killed once the engine
thread has waited `ANSWER_SECONDS` for its next audio, and the section fails with `EngineError`: the
request, its engine thread or lane and every request behind it waited for ever. The next request gets a
fresh child; a request whose reader is away between frames (handing chunks over) is never killed."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

from npu_worker.engine import espeak_request_deadline
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.protocol import EngineError
from tests.test_espeak_child_restart import running
from tests.timing import seconds

LONG_TEXT = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. " * 40


def test_a_child_stopped_mid_request_is_killed_and_the_next_request_gets_another(monkeypatch):
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS", 1.0)
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS_PER_CHAR", 0.0)
    engine = EspeakProcessEngine()
    engine.load()
    stopped = engine.child.pid
    outcome: list[object] = []

    def synthesise() -> None:
        chunks = 0
        try:
            for _ in engine.stream(SynthesisRequest(LONG_TEXT, "ko")):
                if chunks == 0:
                    os.kill(stopped, signal.SIGSTOP)  # mid-request: its first audio is in, the rest not
                chunks += 1
            outcome.append(chunks)
        except BaseException as error:  # noqa: BLE001 - what the section ended with
            outcome.append(error)

    section = threading.Thread(target=synthesise, daemon=True)
    try:
        section.start()
        section.join(seconds(20))
        assert outcome, "the section waited for ever on a child stopped mid-request"
        error = outcome[0]
        # (its audio, ≈ 2 min, outgrows the 1 MiB pipe: it cannot all be there before the stop)
        assert isinstance(error, EngineError), error
        assert "did not answer its next audio within 1 s" in error.message and "killed" in error.message
        assert not running(stopped)
        chunks = list(engine.stream(SynthesisRequest("안녕하세요.", "ko")))
        assert chunks and engine.child.pid != stopped
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped, signal.SIGKILL)
        engine.close()


def test_a_reader_away_between_frames_longer_than_the_bound_is_not_killed(monkeypatch):
    """The clock runs only while the engine thread waits on the child: time spent handing chunks over
    (the child meanwhile blocked on its pipe, or done) is not the child's silence."""
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS", 0.3)
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS_PER_CHAR", 0.0)
    engine = EspeakProcessEngine()
    engine.load()
    try:
        chunks = 0
        for _ in engine.stream(SynthesisRequest(LONG_TEXT, "ko")):
            if chunks < 3:
                time.sleep(0.5)  # past the bound, three times over, with the deadline armed
            chunks += 1
        assert chunks > 3
        assert running(engine.child.pid)
    finally:
        engine.close()
