"""Stopping a decoder call in flight (interruptible.py) on real onnxruntime sessions of the tiny model,
and the engine's stream around it: a stopped step is run again and the samples do not change."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from npu_worker.engine import providers
from npu_worker.engine.base import Interrupted, SynthesisRequest
from npu_worker.engine.interruptible import SHAPES_KEPT, Calls, GuardedSession
from npu_worker.engine.zipvoice import runtime, sampler
from npu_worker.engine.zipvoice.engine import ZipVoiceEngine, create
from tests.timing import seconds
from tests.zipvoice.conftest import engine_config

FRAMES = 2000  # about a second per call on 2 cores: long enough to be caught in flight
CONFIG = providers.RuntimeConfig(threads=1)


@pytest.fixture(scope="module")
def session(tiny_model_dir: Path):  # noqa: ANN201
    return providers.open_session(tiny_model_dir / "fm_decoder.onnx", "cpu", CONFIG)


def decoder_inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, FRAMES, 100), dtype=np.float32) for _ in range(3))  # type: ignore[return-value]


class Clock:
    """A clock the test moves by hand, so 'how long the call has run' is not left to the machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def call_in_background(decoder: runtime.Decoder, calls: Calls) -> tuple[threading.Thread, list[object]]:
    """Run one decoder call on a thread; returns it once the call is in flight, and its outcome list."""
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(decoder(0.3, *decoder_inputs()))
        except Interrupted as exc:
            outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + seconds(10)
    while not calls.in_flight and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert calls.in_flight, "the call never started"
    return thread, outcome


def test_a_cancel_stops_the_call_in_flight_and_the_session_runs_on_unchanged(session):
    calls = Calls()
    decoder = runtime.Decoder(GuardedSession(session, calls, restartable=True), 3.0)
    expected = runtime.Decoder(session, 3.0)(0.3, *decoder_inputs())
    thread, outcome = call_in_background(decoder, calls)
    assert calls.interrupt(restart=False)
    thread.join(seconds(10))
    assert isinstance(outcome[0], Interrupted)
    assert not calls.in_flight and not calls.interrupt(restart=False)  # nothing in flight: nothing to stop
    assert np.array_equal(decoder(0.3, *decoder_inputs()), expected)


def test_a_preemption_stops_only_a_restartable_call_in_the_first_half_of_its_expected_time(session):
    clock = Clock()
    calls = Calls(clock)
    decoder = runtime.Decoder(GuardedSession(session, calls, restartable=True), 3.0)
    vocoder_like = runtime.Decoder(GuardedSession(session, calls, restartable=False), 3.0)

    thread, outcome = call_in_background(decoder, calls)
    assert not calls.interrupt(restart=True)  # first call of this shape: its cost is unknown, it runs on
    clock.now = 10.0
    thread.join(seconds(20))
    assert isinstance(outcome[0], np.ndarray)  # now known: 10 "seconds"

    thread, outcome = call_in_background(decoder, calls)
    clock.now += 6.0  # past half of the 10 expected: waiting costs less than a redo
    assert not calls.interrupt(restart=True)
    thread.join(seconds(20))
    assert isinstance(outcome[0], np.ndarray)

    thread, outcome = call_in_background(decoder, calls)
    clock.now += 2.0  # the last call took 6: a third of it has passed
    assert calls.interrupt(restart=True)
    thread.join(seconds(20))
    assert isinstance(outcome[0], Interrupted)

    thread, outcome = call_in_background(vocoder_like, calls)
    assert not calls.interrupt(restart=True)  # not restartable: only a cancel stops it
    assert calls.interrupt(restart=False)
    thread.join(seconds(20))
    assert isinstance(outcome[0], Interrupted)
    assert calls.interrupted == 2


def test_the_sampler_runs_a_stopped_step_again_from_the_same_state():
    rng = np.random.default_rng(3)
    text, prompt = (
        rng.standard_normal((1, 40, 8), dtype=np.float32),
        rng.standard_normal((10, 8)).astype(np.float32),
    )
    weights = rng.standard_normal((8, 8)).astype(np.float32)

    def velocity(t: float, x: np.ndarray, text_condition: np.ndarray, speech: np.ndarray) -> np.ndarray:
        return np.tanh(x @ weights) * (1 - t) + text_condition

    stop_at = {2, 5}
    calls = []

    def stopping(t: float, x: np.ndarray, text_condition: np.ndarray, speech: np.ndarray) -> np.ndarray:
        calls.append(t)
        if len(calls) in stop_at:
            raise Interrupted("stopped")
        return velocity(t, x, text_condition, speech)

    steps = sampler.euler_steps(stopping, text, prompt, 4, seed=7)
    counts = []
    while True:
        try:
            counts.append(next(steps))
        except StopIteration as done:
            interrupted = done.value
            break
    assert counts == [1, 1, 2, 3, 3, 4]  # a stopped call is a pause point without progress
    assert np.array_equal(interrupted, sampler.euler_sample(velocity, text, prompt, 4, seed=7))


@pytest.fixture(scope="module")
def engine(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZipVoiceEngine]:
    engine = create(engine_config(tiny_model_dir, tmp_path_factory.mktemp("state")))
    engine.load()
    yield engine
    engine.close()  # and its espeak child (else left running to the session's end)


TEXT = "오늘은 전기차 배터리가 어떻게 작동하는지 함께 살펴보겠습니다. 먼저 강의 순서를 소개합니다."


def test_decoder_calls_stopped_for_previews_leave_the_engines_samples_unchanged(engine):
    request = SynthesisRequest(TEXT, seed=4, early_audio=False)
    alone = np.concatenate(list(engine.stream(request)))  # also teaches the calls their expected time
    before, done = engine.calls.interrupted, threading.Event()

    def stop_the_next_call_early() -> None:
        while not engine.interrupt(restart=True) and not done.is_set():
            time.sleep(0.0005)

    stoppers, chunks = [], []
    for chunk in engine.stream(request):
        chunks.append(chunk)
        if chunk.size == 0 and len(stoppers) < 3:  # a step boundary: the next decoder call is about to run
            stoppers.append(threading.Thread(target=stop_the_next_call_early))
            stoppers[-1].start()
    done.set()
    for stopper in stoppers:
        stopper.join()
    assert engine.calls.interrupted - before >= 1
    assert np.array_equal(np.concatenate(chunks), alone)


def test_the_expected_durations_kept_are_bounded_however_many_shapes_pass(session):
    calls = Calls()
    decoder = runtime.Decoder(GuardedSession(session, calls, restartable=True), 3.0)
    for frames in range(5, 5 + SHAPES_KEPT + 10):  # on the CPU every segment has its own frame count
        inputs = [np.zeros((1, frames, 100), dtype=np.float32)] * 3
        decoder(0.3, *inputs)
    assert len(calls._seconds) == SHAPES_KEPT
