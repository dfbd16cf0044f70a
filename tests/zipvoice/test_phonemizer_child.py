"""ZipVoice's phonemizer child (`ChildPhonemizer`): a child that stops answering (SIGSTOP, a hung host)
is killed at the call's deadline and that request ends in an `EngineError` (it held the engine thread,
and every request behind it, for ever); the engine owns its child and closes it with itself (the child
shared by every engine of the process was never closed)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

import pytest

from npu_worker.engine import espeak_process
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_phonemizer import ChildPhonemizer
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine
from npu_worker.protocol import EngineError
from tests.timing import seconds
from tests.zipvoice.conftest import engine_config

DEADLINE = 0.5  # the test's phonemize deadline (the worker's: `PHONEMIZE_SECONDS`)


def outcome_of(call: Callable[[], object]) -> list[object]:
    """What `call` returned or raised, run on a thread: [] while it still waits (after a bound far past
    the deadline: before the fix it waited for ever)."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # noqa: BLE001 - what the call ended with
            outcome.append(error)

    caller = threading.Thread(target=run, daemon=True)
    caller.start()
    caller.join(seconds(20))
    return outcome


def stopped(child: ChildEspeak | None) -> ChildEspeak:
    assert child is not None
    os.kill(child.pid, signal.SIGSTOP)
    return child


def assert_killed_for_not_answering(outcome: list[object], child: ChildEspeak) -> None:
    try:
        assert outcome, "the call waited on the stopped child past its deadline"
        error = outcome[0]
        assert isinstance(error, EngineError), error
        assert "did not answer a phonemize call" in error.message and "killed" in error.message
        assert not child.alive  # killed, not left stopped behind the worker
    finally:
        if child.alive:  # the check failed: the stopped child must not outlive the test
            child.kill()


def test_a_stopped_phonemizer_child_fails_the_call_at_its_deadline_and_the_next_gets_another(monkeypatch):
    monkeypatch.setattr(espeak_process, "PHONEMIZE_SECONDS", DEADLINE)
    phonemizer = ChildPhonemizer()
    try:
        assert phonemizer("하나", "ko")
        child = stopped(phonemizer._child)
        assert_killed_for_not_answering(outcome_of(lambda: phonemizer("둘", "ko")), child)
        assert phonemizer("셋", "ko")  # another child
        assert phonemizer._child is not None and phonemizer._child.pid != child.pid
    finally:
        phonemizer.close()


def test_a_call_after_the_close_fails_and_starts_no_child():
    """The engine thread's call past the shutdown's join started a child that nothing closed."""
    phonemizer = ChildPhonemizer()
    assert phonemizer("하나", "ko")
    phonemizer.close()
    with pytest.raises(EngineError, match="closed"):
        phonemizer("둘", "ko")
    left = phonemizer._child
    if left is not None:  # the failure: a child the close will never see
        left.close()
    assert left is None


@pytest.fixture
def engine(tiny_model_dir, tmp_path) -> ZipVoiceEngine:
    engine = ZipVoiceEngine(engine_config(tiny_model_dir, tmp_path))
    engine.load()
    yield engine
    engine.close()


def speak(engine: ZipVoiceEngine, text: str) -> int:
    return sum(chunk.size for chunk in engine.stream(SynthesisRequest(text, "ko", seed=0)))


def test_a_request_on_a_stopped_phonemizer_child_ends_in_an_engine_error_and_the_engine_closes_its_next(
    engine, monkeypatch
):
    """One engine for both (a ZipVoice load is most of this module's time)."""
    monkeypatch.setattr(espeak_process, "PHONEMIZE_SECONDS", DEADLINE)
    assert speak(engine, "안녕하세요.") > 0
    owned = engine._own_phonemizer
    assert owned is not None
    child = stopped(owned._child)
    assert_killed_for_not_answering(outcome_of(lambda: speak(engine, "반갑습니다.")), child)
    assert speak(engine, "반갑습니다.") > 0
    child = owned._child  # the next one, which the engine closes with itself
    assert child is not None and child.alive
    engine.close()
    assert not child.alive and owned._child is None
