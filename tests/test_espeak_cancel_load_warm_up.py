"""A shutdown during the load of an espeak child that is ready but hangs on the load's warm-up request
(SIGSTOP, a hung host): `cancel_load` (what `EngineLoad.stop_loading` calls at a SIGTERM) killed only a
child still starting, so the load waited out the warm-up's answer deadline (`ANSWER_SECONDS`, 30 s) and
held the worker's exit. Now the ready child is killed too, and the load ends at once with an error."""

from __future__ import annotations

import contextlib
import os
import signal
import threading

from npu_worker.engine import espeak_request_deadline
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.protocol import WorkerError
from tests.test_espeak_child_restart import running
from tests.timing import seconds


def test_cancel_load_ends_a_load_whose_ready_child_hangs_on_its_warm_up(monkeypatch):
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS", 600.0)  # what the load would wait
    engine = EspeakProcessEngine()
    stopped: list[int] = []
    warming_up = threading.Event()

    def stop_the_child(self: EspeakProcessEngine) -> None:  # called just before the warm-up request
        stopped.append(self.child.pid)
        os.kill(stopped[0], signal.SIGSTOP)
        warming_up.set()

    monkeypatch.setattr(EspeakProcessEngine, "warm_up_reader", stop_the_child)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            engine.load()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - what the load ended with
            outcome.append(error)

    loading = threading.Thread(target=load, daemon=True)
    try:
        loading.start()
        assert warming_up.wait(seconds(20)), "the child's READY"
        engine.cancel_load()
        loading.join(seconds(20))
        assert outcome, "the load waited on a child that hangs on its warm-up after cancel_load"
        assert isinstance(outcome[0], WorkerError), outcome
        assert not running(stopped[0])
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        engine.close()


def test_cancel_load_as_the_child_became_ready_ends_its_warm_up(monkeypatch):
    """The SIGTERM's `cancel_load` landing after the child's `READY` was read (no child starting any
    more) and before the engine held that child: neither was found to kill, and a child that then hung
    on the warm-up held the load, and the exit, for the warm-up's answer deadline."""
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS", 600.0)  # what the load would wait
    stopped: list[int] = []
    first_child = EspeakProcessEngine._first_child

    def ready_then_cancelled(self: EspeakProcessEngine) -> ChildEspeak:
        child = first_child(self)
        self.cancel_load()  # the shutdown's, at this instant
        with contextlib.suppress(ProcessLookupError):  # (one killed by it is a zombie: stopped all the same)
            os.kill(child.pid, signal.SIGSTOP)  # and a child that hangs on the warm-up
        stopped.append(child.pid)
        return child

    monkeypatch.setattr(EspeakProcessEngine, "_first_child", ready_then_cancelled)
    engine = EspeakProcessEngine()  # (its factory, the bound `_first_child`, taken here)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            engine.load()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - what the load ended with
            outcome.append(error)

    loading = threading.Thread(target=load, daemon=True)
    try:
        loading.start()
        loading.join(seconds(20))
        assert stopped, "the load never started its child"
        assert outcome, "the load waited on a child it was told to give up as it became ready"
        assert isinstance(outcome[0], WorkerError), outcome
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        engine.close()
