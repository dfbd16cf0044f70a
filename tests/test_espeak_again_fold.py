"""`ChildEspeak.chunks` and `chunks_into` share their start (`_sent`: the child that took the request,
this one or `again`'s once) and their last frame (`_last_frame`), stop 56: with real children, the
second child takes the whole request, its end (a stop part way, a drain, the id a `STOP` names) is its
own, and a second child gone at once too is the worker's `EngineError`, for both ways of reading."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.protocol import EngineError
from tests.timing import seconds

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."
REQUEST = SynthesisRequest(SENTENCE * 4, "ko")


def dead_child() -> ChildEspeak:
    """A child that died while idle: its next request's write finds it gone (`ChildGone`)."""
    child = ChildEspeak()
    os.kill(child.pid, signal.SIGKILL)
    child._process.wait(seconds(5))
    return child


def read(child: ChildEspeak, way: str, again: ChildEspeak | None = None, first_only: bool = False) -> int:
    """Samples of `REQUEST` made by `child` (or `again`'s once): all, or the first chunk only (then
    stopped: the generator closed, or the sink refusing)."""
    take = (lambda: again) if again is not None else None
    if way == "chunks":
        chunks = child.chunks(REQUEST, take)
        if first_only:
            size = next(chunks).size
            chunks.close()
            return size
        return sum(chunk.size for chunk in chunks)
    got: list[int] = []
    child.chunks_into(REQUEST, lambda chunk: got.append(chunk.size) is None and not first_only, take)
    return sum(got)


@pytest.mark.parametrize("way", ["chunks", "chunks_into"])
def test_a_second_child_gone_at_once_too_is_an_engine_error_naming_both(way):
    first, second = dead_child(), dead_child()
    try:
        with pytest.raises(EngineError, match="it ended again at once"):
            read(first, way, again=second)
        assert first.closed and second.closed
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("way", ["chunks", "chunks_into"])
def test_the_child_started_again_makes_the_request_and_ends_it_as_its_own(way):
    """Stopped after its first chunk, the second child is drained (its next request is whole, the
    same as a fresh child's) and lets its request go (no `STOP` target, no deadline running)."""
    alone_child = ChildEspeak()
    first, second = dead_child(), ChildEspeak()
    try:
        alone = read(alone_child, way)
        assert read(first, way, again=second, first_only=True) > 0
        assert first.closed and not second.closed
        assert second._live is None and second._answers.watch is None
        assert read(second, way) == alone
        third = dead_child()
        try:
            assert read(third, way, again=second) == alone  # whole, from the second child
            assert second._live is None and second._answers.watch is None
        finally:
            third.close()
    finally:
        for child in (alone_child, first, second):
            child.close()


@pytest.mark.parametrize("way", ["chunks", "chunks_into"])
def test_a_child_started_again_that_dies_mid_request_fails_it_and_is_closed(way):
    """The second child's death part way is its own failure (closed, exit status named), not the
    first's, and not taken for a child gone before the request (no third start)."""
    first, second = dead_child(), ChildEspeak()
    long = SynthesisRequest(SENTENCE * 30, "ko")
    try:
        with pytest.raises(EngineError, match=r"exit status -9"):
            if way == "chunks":
                chunks = first.chunks(long, lambda: second)
                assert np.asarray(next(chunks)).size
                os.kill(second.pid, signal.SIGKILL)
                for _ in chunks:
                    pass
            else:

                def sink(chunk: np.ndarray) -> bool:
                    if not second.closed and second.alive:
                        os.kill(second.pid, signal.SIGKILL)
                    return True

                first.chunks_into(long, sink, lambda: second)
        assert second.closed
    finally:
        first.close()
        second.close()
