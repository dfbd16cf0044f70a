"""What reading the espeak child's frames costs the engine lane, counted (issue 25): a frame read as a
header and a payload, with a clock read and the deadline's bookkeeping around each, was 14 Python calls
on the lane, ≈ 195 a `/ws` preview (benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 53)."""

from __future__ import annotations

import sys
from typing import Any

from npu_worker.engine.base import SynthesisRequest
from tests import espeak_children

engine = espeak_children.engine  # the fixture: this module's own loaded espeak child
SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."


def counted(child: Any, text: str) -> tuple[int, int]:
    """The frames of `text`'s request and the calls (Python's and C's) the reading thread made."""
    calls = [0]

    def count(frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            calls[0] += 1

    chunks, frames = child.chunks(SynthesisRequest(text, "ko")), 0
    sys.setprofile(count)
    try:
        for _ in chunks:
            frames += 1
    finally:
        sys.setprofile(None)
    return frames, calls[0]


def test_a_frame_of_a_real_child_costs_the_lane_a_few_python_calls(engine):
    """Counted, not timed: the calls the engine thread makes a frame of a real child's request (the
    request's own, its send and its deadline, taken out by comparing a long text with a short one). A
    frame read as a header and a payload, a clock read and two stores of the deadline around each, was
    14.0; a frame cut out of a pipe's worth by one `unpack_from` is 4.9."""
    child = engine.child
    counted(child, SENTENCE)  # warm
    short, long = counted(child, SENTENCE), counted(child, SENTENCE * 6)
    frames, calls = long[0] - short[0], long[1] - short[1]
    assert frames >= 10, (short, long)
    assert calls / frames < 7, f"{calls} calls for {frames} frames"
