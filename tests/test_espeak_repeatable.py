"""The same text makes the same espeak audio, byte for byte: twice in one process, after other texts and
after a synthesis stopped half-way, in a second espeak instance (a lane), in a child process and in a
second child. espeak-ng's wave generator kept counters in C statics from one utterance to the next (the
pitch flutter's place, the gain control), so a cache refill was a few samples longer or shorter than
the first render and differed from its first voiced sound on (`engine/espeak_state.py`)."""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.engine.espeak_lib import get_espeak
from npu_worker.engine.espeak_process import EspeakProcessEngine
from npu_worker.engine.espeak_state import CarriedState
from tests import espeak_children

child_engine = espeak_children.engine  # the fixture: this module's own loaded espeak child
TEXT = SynthesisRequest("오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. 내일은 맑겠습니다.", "ko")
OTHERS = [
    SynthesisRequest("hello there, how are you today?", "en", 1.6),
    SynthesisRequest("가나다", "ko", 0.7),
]


def pcm(engine: EspeakEngine, request: SynthesisRequest = TEXT, stop_after: int | None = None) -> str:
    """The request's float32 PCM, hashed; `stop_after`: the sink refuses the chunk after that many."""
    chunks: list[np.ndarray] = []

    def sink(chunk: np.ndarray) -> bool:
        chunks.append(chunk.copy())
        return stop_after is None or len(chunks) < stop_after

    engine.stream_into(request, sink)
    return hashlib.sha256(np.concatenate(chunks).tobytes()).hexdigest()


@pytest.fixture(scope="module")
def engine() -> EspeakEngine:
    engine = EspeakEngine()
    engine.load()
    return engine


def test_the_wheels_library_has_the_statics_that_carry_over():
    assert get_espeak()._carried.repeatable  # (a stripped build would not be: the tests below say so)


def test_a_file_that_is_not_the_loaded_library_is_never_written_by(tmp_path):
    """The statics' addresses come from the file read: one that is not the library loaded (another ELF,
    no ELF at all) resets nothing, rather than writing where its symbols say."""
    (tmp_path / "text").write_text("not an ELF file")
    library = get_espeak()._lib
    for path in (sys.executable, str(tmp_path / "text"), str(tmp_path / "missing")):
        assert not CarriedState(library, path).repeatable, path


def test_the_same_text_twice_in_one_process_is_the_same_pcm(engine):
    first = pcm(engine)
    assert pcm(engine) == first
    for other in OTHERS:
        pcm(engine, other)
    pcm(engine, stop_after=1)  # stopped after its first chunk: espeak left mid-utterance
    assert pcm(engine) == first
    lane = engine.lane()  # a second espeak instance (another copy of the library)
    lane.load()
    assert pcm(lane) == first


def test_the_same_text_is_the_same_pcm_in_one_child_and_in_two(engine, child_engine):
    first = pcm(child_engine)
    for other in OTHERS:
        pcm(child_engine, other)
    assert pcm(child_engine) == first
    second = EspeakProcessEngine()
    second.load()
    try:
        assert second.child.pid != child_engine.child.pid
        assert pcm(second) == first
    finally:
        second.close()
    assert pcm(engine) == first  # and the same as the server's own process makes
