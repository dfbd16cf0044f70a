"""The engine lane's push loop over the espeak child's frames (issue 25): `stream_into` hands each
frame's chunk to the sink from the reader's own loop (`FrameReader.audio_into`), where a generator
resumed a frame and its `read` were two Python calls more a frame (benchmarks/SERVER_OVERHEAD.md,
2026-12-06, stop 55). The same chunks, byte for byte, as the pulled `chunks`; the same stop and drain."""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_child import AUDIO, END, BrokenStream, write_frames
from npu_worker.engine.espeak_frame_reader import FrameReader, UnreadFrame
from npu_worker.protocol import EngineError, UnknownLanguage
from tests import espeak_children

engine = espeak_children.engine  # the fixture: this module's own loaded espeak child
SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."


def pushed(engine: Any, text: str) -> list[bytes]:
    chunks: list[bytes] = []
    engine.stream_into(SynthesisRequest(text, "ko"), lambda chunk: chunks.append(chunk.tobytes()) is None)
    return chunks


def pulled(engine: Any, text: str) -> list[bytes]:
    return [chunk.tobytes() for chunk in engine.child.chunks(SynthesisRequest(text, "ko"))]


def counted(engine: Any, text: str) -> tuple[int, int]:
    """The frames of `text`'s request pushed to a sink that takes them, and the calls (Python's and
    C's) the lane made for them, the sink's own among them; a wait on the pipe (`_read_more`, a
    pipe's worth of frames, as many as the child's writes came apart) counts as one call."""
    calls, frames, waiting = [0], [0], [0]

    def count(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "_read_more":
            waiting[0] += 1
            if waiting[0] == 1:
                calls[0] += 1
        elif event == "return" and frame.f_code.co_name == "_read_more":
            waiting[0] -= 1
        elif event in ("call", "c_call") and not waiting[0]:
            calls[0] += 1

    def sink(chunk: np.ndarray) -> bool:
        frames[0] += 1
        return True

    request = SynthesisRequest(text, "ko")
    sys.setprofile(count)
    try:
        engine.stream_into(request, sink)
    finally:
        sys.setprofile(None)
    return frames[0], calls[0]


def test_a_pushed_frame_costs_the_lane_fewer_calls_than_a_pulled_one(engine):
    """Counted, not timed (the request's own calls taken out by comparing a long text with a short
    one; a wait on the pipe one call, however many frames it brings): a frame pulled through `chunks`
    was 5 calls on the lane (the generator's resumption, `read`, `unpack_from`, `frombuffer`, the
    sink), pushed it is 3 (`unpack_from`, `frombuffer`, the sink)."""
    counted(engine, SENTENCE)  # warm
    short, long = counted(engine, SENTENCE), counted(engine, SENTENCE * 6)
    frames, calls = long[0] - short[0], long[1] - short[1]
    assert frames >= 10, (short, long)
    assert calls / frames < 4, f"{calls} calls for {frames} frames"


def test_pushed_chunks_are_the_pulled_ones_byte_for_byte(engine):
    for text in (SENTENCE, SENTENCE * 6, "네."):
        assert pushed(engine, text) == pulled(engine, text)


def test_a_sink_that_raises_stops_the_child_and_the_next_request_is_whole(engine):
    """What the sink raises passes as it is (not the child's failure: the child lives on), after the
    child's request is stopped and drained, so the next request's chunks are its own, whole."""
    whole = pushed(engine, SENTENCE * 3)
    child = engine.child
    taken: list[int] = []

    def sink(chunk: np.ndarray) -> bool:
        taken.append(chunk.size)
        raise OSError("the sink's own")

    with pytest.raises(OSError, match="the sink's own"):
        engine.stream_into(SynthesisRequest(SENTENCE * 3, "ko"), sink)
    assert len(taken) == 1
    assert engine.child is child and not child.closed
    assert pushed(engine, SENTENCE * 3) == whole


def test_a_child_killed_under_the_push_fails_the_section_and_the_next_is_whole(engine):
    whole = pushed(engine, SENTENCE)
    child = engine.child

    def sink(chunk: np.ndarray) -> bool:
        child.kill()
        return True

    with pytest.raises(EngineError):
        engine.stream_into(SynthesisRequest(SENTENCE * 6, "ko"), sink)
    assert child.closed and engine.child is not child
    assert pushed(engine, SENTENCE) == whole


def voice_checks(engine: Any, lang: str) -> int:
    """How often the request's language was looked up (`voice_for`) by a push of one request."""
    looked = [0]

    def count(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "voice_for":
            looked[0] += 1

    sys.setprofile(count)
    try:
        engine.stream_into(SynthesisRequest("네.", lang), lambda chunk: True)
    finally:
        sys.setprofile(None)
    return looked[0]


def test_a_lanes_language_said_again_is_not_looked_up_again_and_an_unknown_one_always_fails(engine):
    """The lane's last language as the caller spelled it is kept (≈ 11 calls a request to look it up
    again); another spelling or language is looked up, an unknown one fails every time, before the
    child, and is never kept, so the language after it is spoken in its own voice."""
    voice_checks(engine, "ko")
    assert voice_checks(engine, "ko") == 0
    assert voice_checks(engine, " KO ") == 1
    assert voice_checks(engine, " KO ") == 0
    korean = pushed(engine, SENTENCE)
    english = [b"".join(pulled_lang(engine, "Good morning.", "en"))]
    for _ in range(2):
        with pytest.raises(UnknownLanguage):
            engine.stream_into(SynthesisRequest(SENTENCE, "xx-nowhere"), lambda chunk: True)
    assert pushed(engine, SENTENCE) == korean
    got: list[bytes] = []
    engine.stream_into(
        SynthesisRequest("Good morning.", "en"), lambda chunk: got.append(chunk.tobytes()) is None
    )
    assert [b"".join(got)] == english
    with pytest.raises(UnknownLanguage):
        engine.stream_into(SynthesisRequest(SENTENCE, "xx-nowhere"), lambda chunk: True)


def pulled_lang(engine: Any, text: str, lang: str) -> list[bytes]:
    return [chunk.tobytes() for chunk in engine.child.chunks(SynthesisRequest(text, lang))]


def test_the_reader_tells_a_broken_pipe_from_what_its_sink_raised():
    """On a real pipe: a sink's own ValueError passes as it is, with the reader past that frame (the
    drain after it reads the next); a pipe that closes mid-request is an `UnreadFrame` (the child's
    end), after the frames it held."""
    read_end, write_end = os.pipe()
    samples = [np.arange(n, dtype=np.float32) for n in (3, 5, 7)]
    write_frames(write_end, [(AUDIO, s.tobytes()) for s in samples] + [(END, b"")])
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        reader = FrameReader(pipe, 64)

        def refuse(chunk: np.ndarray) -> bool:
            raise ValueError("the sink's own")

        with pytest.raises(ValueError, match="the sink's own"):
            reader.audio_into(AUDIO, refuse)
        got: list[np.ndarray] = []
        assert reader.audio_into(AUDIO, lambda chunk: got.append(chunk) is None) == (END, bytearray())
        assert [c.tolist() for c in got] == [s.tolist() for s in samples[1:]]
        write_frames(write_end, [(AUDIO, samples[0].tobytes())])
        os.close(write_end)
        got.clear()
        with pytest.raises(UnreadFrame) as unread:
            reader.audio_into(AUDIO, lambda chunk: got.append(chunk) is None)
        assert isinstance(unread.value.error, BrokenStream)
        assert [c.tolist() for c in got] == [samples[0].tolist()]
