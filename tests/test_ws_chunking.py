"""The growing frame schedule and the onset watch of the WebSocket audio path (pure, no sockets)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from npu_worker.audio import OnsetWatch, audible_onset
from npu_worker.ws_server.chunking import GrowingChunker, schedule_sizes

RATE = 24000


def test_schedule_sizes_are_the_milliseconds_in_samples() -> None:
    assert schedule_sizes((40, 80, 160, 320), RATE) == (960, 1920, 3840, 7680)


@pytest.mark.parametrize("schedule", [(), (0.0,), (40.0, -1.0)])
def test_schedule_without_positive_sizes_is_refused(schedule: tuple[float, ...]) -> None:
    with pytest.raises(ValueError):
        schedule_sizes(schedule, RATE)


def test_frames_follow_the_schedule_then_repeat_the_last_size() -> None:
    chunker = GrowingChunker((10, 20, 40))
    frames = chunker.feed(np.zeros(10 + 20 + 40 * 3, dtype=np.float32))
    assert [f.size for f in frames] == [10, 20, 40, 40, 40]


def test_pieces_are_joined_by_numpy_s_c_function_with_no_python_call() -> None:
    """`np.concatenate`'s Python dispatcher ran once a join, ≈ 8 a `/ws` preview on the event loop
    (benchmarks/SERVER_OVERHEAD.md, stop 59); the frames are the same samples in the same order."""
    chunker = GrowingChunker((5, 8), dtype=np.int16)
    pieces = [np.arange(start, start + 3, dtype=np.int16) for start in range(0, 15, 3)]
    entered: list[str] = []

    def record(frame: Any, event: str, _: object) -> None:
        if event == "call" and frame.f_code.co_filename != __file__:
            entered.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    sys.setprofile(record)
    try:
        frames = [frame for piece in pieces for frame in chunker.feed(piece)]
        rest = chunker.flush()
    finally:
        sys.setprofile(None)
    assert [name for name in entered if not name.endswith(("chunking.py:feed", "chunking.py:flush"))] == []
    assert [f.tolist() for f in frames] == [list(range(0, 5)), list(range(5, 13))]
    assert rest is not None and rest.tolist() == [13, 14] and rest.dtype == np.int16


def test_pcm_is_cut_as_pcm_and_one_waiting_piece_without_a_copy() -> None:
    """`/ws` converts each engine chunk to PCM once and cuts that (a conversion per frame cost ~1.7
    times as many calls); a frame cut from one waiting piece is a view of it."""
    chunker = GrowingChunker((10, 20), dtype="<i2")
    pcm = np.arange(45, dtype="<i2")
    frames = chunker.feed(pcm)
    assert [f.dtype for f in frames] == [np.dtype("<i2")] * 2
    assert [f.tolist() for f in frames] == [list(range(10)), list(range(10, 30))]
    assert all(np.shares_memory(frame, pcm) for frame in frames)
    rest = chunker.flush()
    assert rest is not None and rest.tolist() == list(range(30, 45)) and rest.dtype == np.dtype("<i2")


def test_small_engine_chunks_are_gathered_into_one_frame() -> None:
    chunker = GrowingChunker((25, 50))
    sizes: list[int] = []
    for _ in range(15):
        sizes += [f.size for f in chunker.feed(np.ones(7, dtype=np.float32))]
    assert sizes == [25, 50]
    assert chunker.pending_samples == 15 * 7 - 75


def test_flush_sends_the_rest_and_the_schedule_keeps_growing_over_sections() -> None:
    chunker = GrowingChunker((10, 20, 40))
    first_section = [f.size for f in chunker.feed(np.zeros(15, dtype=np.float32))]
    rest = chunker.flush()
    second_section = [f.size for f in chunker.feed(np.zeros(100, dtype=np.float32))]
    assert first_section == [10]
    assert rest is not None and rest.size == 5
    assert second_section == [40, 40]
    assert chunker.flush() is not None
    assert chunker.flush() is None


def test_frames_concatenate_to_exactly_what_was_fed() -> None:
    rng = np.random.default_rng(7)
    fed = [rng.standard_normal(int(n)).astype(np.float32) for n in rng.integers(1, 3000, size=40)]
    chunker = GrowingChunker(schedule_sizes((40, 80, 160, 320), RATE))
    frames: list[np.ndarray] = []
    for piece in fed:
        frames += chunker.feed(piece)
    tail = chunker.flush()
    frames += [tail] if tail is not None else []
    np.testing.assert_array_equal(np.concatenate(frames), np.concatenate(fed))


def tone(seconds: float, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * 330 * t)).astype(np.float32)


def test_onset_watch_reports_the_onset_once_soon_after_the_frame_that_carries_it() -> None:
    audio = np.concatenate([np.zeros(int(0.5 * RATE), dtype=np.float32), tone(0.5)])
    watch = OnsetWatch(RATE)
    step = 480
    reports = [(i, watch.feed(audio[s : s + step])) for i, s in enumerate(range(0, audio.size, step))]
    found = [(i, position) for i, position in reports if position is not None]
    assert len(found) == 1
    frame, position = found[0]
    assert position == audible_onset(audio, RATE)
    # Known within the rule's look-ahead (two non-overlapping 20 ms windows) plus one frame.
    assert position <= (frame + 1) * step <= position + int(0.04 * RATE) + step


def test_onset_watch_keeps_bounded_memory_over_long_silence() -> None:
    watch = OnsetWatch(RATE)
    for _ in range(1000):
        assert watch.feed(np.zeros(960, dtype=np.float32)) is None
    assert watch._tail.size < 960 + int(0.1 * RATE)
    whole = np.concatenate([np.zeros(1000 * 960, dtype=np.float32), tone(0.1)])
    assert watch.feed(tone(0.1)) == audible_onset(whole, RATE)


@pytest.mark.parametrize("quiet_seconds", [0.0, 0.013, 0.25, 1.7])
@pytest.mark.parametrize("amplitude", [0.0, 0.001, 0.3])
@pytest.mark.parametrize("step", [100, 700, 4000])
def test_onset_watch_agrees_with_the_whole_stream_rule(
    quiet_seconds: float, amplitude: float, step: int
) -> None:
    audio = np.concatenate([np.zeros(int(quiet_seconds * RATE), dtype=np.float32), tone(0.3, amplitude)])
    watch = OnsetWatch(RATE)
    found = [p for s in range(0, audio.size, step) if (p := watch.feed(audio[s : s + step])) is not None]
    assert found == ([] if audible_onset(audio, RATE) is None else [audible_onset(audio, RATE)])
