"""The engine lane's push loop (`stream_into` → `ChildEspeak.chunks_into` → `FrameReader.audio_into`)
when something fails under it: a child stopped (SIGSTOP) while the sink holds a frame, with the sink
then stopping the request (a cancel) or asking for more (the synthesis deadline's case), and a child
that sends an audio frame that is not whole samples. In each the section ends with the worker's own
error (never a bare exception), and the next request on the lane is whole: its own frames, never the
previous request's."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from npu_worker.engine import espeak_process, espeak_request_deadline
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_child import AUDIO, END, write_frames
from npu_worker.engine.espeak_frame_reader import FrameReader, UnreadFrame
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.protocol import EngineError
from tests.timing import seconds

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. "
LONG_TEXT = SENTENCE * 40  # ≈ 2 min of audio: outgrows the pipe, so it cannot all be there at a stop


@pytest.fixture
def engine():
    engine = EspeakProcessEngine()
    engine.load()
    yield engine
    engine.close()


def pushed(engine: Any, text: str) -> list[bytes]:
    chunks: list[bytes] = []
    engine.stream_into(SynthesisRequest(text, "ko"), lambda chunk: chunks.append(chunk.tobytes()) is None)
    return chunks


def outcome_of(engine: Any, sink: Callable[[np.ndarray], bool]) -> object:
    """What a push of `LONG_TEXT` into `sink` ended with, on a thread of its own (None: it returned)."""
    ended: list[object] = []

    def section() -> None:
        try:
            engine.stream_into(SynthesisRequest(LONG_TEXT, "ko"), sink)
            ended.append(None)
        except BaseException as error:  # noqa: BLE001 - what the section ended with
            ended.append(error)

    thread = threading.Thread(target=section, daemon=True)
    thread.start()
    thread.join(seconds(20))
    assert ended, "the push waited for ever on a stopped child"
    return ended[0]


def stopping_sink(pid: int, then: bool | Exception) -> Callable[[np.ndarray], bool]:
    """A sink that stops the child (SIGSTOP) at its first frame, and answers `then` to every frame
    (or raises it: a section's own error, as a delivery that keeps no audio raising RuntimeError)."""
    taken = [0]

    def sink(chunk: np.ndarray) -> bool:
        taken[0] += 1
        if taken[0] == 1:
            os.kill(pid, signal.SIGSTOP)
        if isinstance(then, Exception):
            raise then
        return then

    return sink


@pytest.mark.parametrize("then", [False, RuntimeError("the section's own")], ids=["cancel", "raises"])
def test_a_sink_that_stops_or_raises_while_the_child_is_stopped_kills_it_and_the_next_is_whole(
    engine, monkeypatch, then
):
    """The sink stops the push (a cancel) or raises with the child stopped: the drain's `STOP` is
    never answered, the stop's deadline kills it, the section ends (no hang) as the sink said (what
    it raised passes as it is), and the next request gets another child and its own chunks."""
    monkeypatch.setattr(espeak_process, "STOP_SECONDS", 0.5)
    whole = pushed(engine, SENTENCE)
    stopped = engine.child.pid
    try:
        assert outcome_of(engine, stopping_sink(stopped, then=then)) is (None if then is False else then)
        assert engine.child.pid != stopped
        assert pushed(engine, SENTENCE) == whole
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped, signal.SIGKILL)


def test_a_child_stopped_mid_push_meets_the_synthesis_deadline_and_the_next_request_is_whole(
    engine, monkeypatch
):
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS", 1.0)
    monkeypatch.setattr(espeak_request_deadline, "ANSWER_SECONDS_PER_CHAR", 0.0)
    whole = pushed(engine, SENTENCE)
    stopped = engine.child.pid
    try:
        error = outcome_of(engine, stopping_sink(stopped, then=True))
        assert isinstance(error, EngineError), error
        assert "did not answer its next audio within 1 s" in error.message
        assert engine.child.pid != stopped
        assert pushed(engine, SENTENCE) == whole
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped, signal.SIGKILL)


def test_a_frame_cut_across_reads_is_pushed_whole():
    """A frame whose header and samples come in separate writes (a child's write split by the pipe):
    the reader waits for the rest and hands the sink the whole frame once."""
    read_end, write_end = os.pipe()
    samples = np.arange(9, dtype=np.float32)
    frame_bytes = bytearray()
    writer_end = os.pipe()  # (a second pipe only to build the frame's bytes as `write_frames` writes them)
    write_frames(writer_end[1], [(AUDIO, samples.tobytes()), (END, b"")])
    os.close(writer_end[1])
    with os.fdopen(writer_end[0], "rb") as built:
        frame_bytes += built.read()
    got: list[np.ndarray] = []

    def write_later() -> None:
        for piece in (frame_bytes[:3], frame_bytes[3:11], frame_bytes[11:]):
            os.write(write_end, piece)
            threading.Event().wait(0.05)
        os.close(write_end)

    writer = threading.Thread(target=write_later)
    writer.start()
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        reader = FrameReader(pipe, 64)
        assert reader.audio_into(AUDIO, lambda chunk: got.append(chunk.copy()) is None) == (END, bytearray())
    writer.join()
    assert [c.tolist() for c in got] == [samples.tolist()]


def test_an_audio_frame_that_is_not_whole_samples_is_an_unread_frame_not_a_bare_valueerror():
    """A damaged or hostile child's audio frame of 7 bytes (not float32 samples): the reader's
    failure (`UnreadFrame`: the child is closed and replaced, the section fails with EngineError),
    where it was numpy's bare ValueError, which passed as the sink's own error and left the child
    that sent it serving the lane."""
    read_end, write_end = os.pipe()
    write_frames(write_end, [(AUDIO, b"\0" * 7), (END, b"")])
    os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        reader = FrameReader(pipe, 64)
        with pytest.raises(UnreadFrame, match="7 bytes"):
            reader.audio_into(AUDIO, lambda chunk: True)


# A damaged child (`espeak_child`'s frames, by hand): ready with one Korean voice, then each request
# answered with ANSWER (one of the two below)
DAMAGED_CHILD = """
import os, struct
def frame(kind, payload):
    return struct.pack("<cI", kind, len(payload)) + payload
ready = b'{"version":"damaged","sample_rate":22050,"default_rate":175,"voices":[["Korean","ko",["ko"]]]}'
os.write(1, frame(b"R", ready))
while os.read(0, 65536):
    os.write(1, ANSWER)
"""
SEVEN_BYTES = 'frame(b"A", bytes(7)) + frame(b"E", b"")'  # "audio" that is not whole float32 samples
NOT_A_FAILURE = 'frame(b"F", b"not json")'  # a failure frame that says nothing readable
HUGE = 'struct.pack("<cI", b"A", 0xFFFFFFFF) + bytes(64)'  # a 4 GiB frame's header: never read whole


def damaged_child(answer: str) -> Any:
    process = subprocess.Popen(
        [sys.executable, "-c", DAMAGED_CHILD.replace("ANSWER", answer)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
    )
    return espeak_process.ChildEspeak(process)


@pytest.mark.parametrize("way", ["pushed", "pulled"])
def test_a_damaged_childs_audio_frame_fails_the_section_with_engine_error_and_closes_it(way):
    """Both ways a section reads the child (`chunks_into`, the lane's; `chunks`, `stream`'s): the
    section's EngineError and the child closed (the next request starts another), where numpy's bare
    ValueError passed out and the child that sent it went on serving the lane."""
    child = damaged_child(SEVEN_BYTES)
    try:
        request = SynthesisRequest("네.", "ko")
        with pytest.raises(EngineError, match="an audio frame of 7 bytes"):
            if way == "pushed":
                child.chunks_into(request, lambda chunk: True)
            else:
                list(child.chunks(request))
        assert child.closed
    finally:
        child.close()


@pytest.mark.parametrize("way", ["pushed", "pulled", "phonemize"])
def test_a_damaged_childs_unreadable_failure_is_engine_error_and_closes_it(way):
    """A `FAILED` frame that is no failure (not its JSON): the call's EngineError and the child closed,
    where msgspec's bare DecodeError passed out and the child that sent it served on."""
    child = damaged_child(NOT_A_FAILURE)
    try:
        request = SynthesisRequest("네.", "ko")
        with pytest.raises(EngineError, match="a failure that is not one"):
            if way == "pushed":
                child.chunks_into(request, lambda chunk: True)
            elif way == "pulled":
                list(child.chunks(request))
            else:
                child.phonemize("네.", "ko")
        assert child.closed
    finally:
        child.close()


def test_a_damaged_childs_huge_frame_length_is_engine_error_not_a_4_gib_buffer():
    """A header that claims 4 GiB of audio: the push's EngineError before any allocation of it (the
    reader's `MAX_FRAME`), the child closed and the next request's child another."""
    child = damaged_child(HUGE)
    try:
        with pytest.raises(EngineError, match="a frame of 4294967295 bytes"):
            child.chunks_into(SynthesisRequest("네.", "ko"), lambda chunk: True)
        assert child.closed
    finally:
        child.close()


def test_a_sent_that_raises_leaves_the_next_request_whole(engine):
    """`sent` (the runner's hand-over of what it held) runs once the request is written, the child
    making it: one that raised left the request unfinished and its frames unread, and the next
    request read them as its own (every section after it one behind)."""
    expected = pushed(engine, "둘째 문장입니다.")

    def refused() -> None:
        raise RuntimeError("the hand-over failed")

    with pytest.raises(RuntimeError):
        engine.stream_into(SynthesisRequest(SENTENCE, "ko"), lambda chunk: True, refused)
    assert pushed(engine, "둘째 문장입니다.") == expected


@pytest.mark.parametrize("how", ["closed", "died_idle"])
def test_what_the_runner_held_goes_before_a_child_is_started_again(engine, how):
    """`sent` hands over the sections the runner held (their `ok`s): with the child gone, it ran only
    once a new child had started and taken the request (≈ 0.3 s, up to the start's bound), so the
    section before waited for the next one's child. Now it runs before the start: the engine still
    has its old child then."""
    old = engine.library
    if how == "closed":
        old.close()  # as after a section that failed
    else:
        old.kill()  # found gone by the request's write
        old._process.wait(timeout=seconds(10))
    had_old_child: list[bool] = []
    engine.stream_into(
        SynthesisRequest("둘째 문장입니다.", "ko"),
        lambda chunk: True,
        lambda: had_old_child.append(engine.library is old),
    )
    assert engine.library is not old, "the request was made by a child started again"
    assert had_old_child and had_old_child[0] is True
