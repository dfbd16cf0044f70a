"""The parent's reader of the espeak child's frames (`FrameReader`): the frames come out byte for byte as
written however the pipe cuts them (a buffer far smaller than a frame, several frames to a read, a frame
larger than the buffer), garbage and a pipe's end are `BrokenStream`, and a request's deadline is told
of each read that waits, not of each frame (`test_espeak_frame_calls.py` counts what a frame costs)."""

from __future__ import annotations

import os
import random
import threading

import pytest

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_child import (
    AUDIO,
    END,
    FAILED,
    PIPE_BYTES,
    BrokenStream,
    write_frames,
)
from npu_worker.engine.espeak_frame_reader import FrameReader
from npu_worker.engine.espeak_process import ANSWER_BUFFER_BYTES, FIRST_ANSWER_BYTES, ChildEspeak
from tests.timing import seconds


def written(frames: list[tuple[bytes, bytes]], pieces: int) -> tuple[int, threading.Thread]:
    """A pipe's reading end, and a thread writing `frames`' bytes into it cut at random places."""
    reading, writing = os.pipe()
    stream = b"".join(kind + len(payload).to_bytes(4, "little") + payload for kind, payload in frames)
    cuts = sorted(random.Random(pieces).sample(range(1, len(stream)), pieces))

    def write() -> None:
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
            os.write(writing, stream[start:end])
        os.close(writing)

    writer = threading.Thread(target=write)
    writer.start()
    return reading, writer


@pytest.mark.parametrize("pieces", [1, 7, 300])
@pytest.mark.parametrize("size", [16, 4096, 1 << 20])
def test_frames_come_out_byte_for_byte_however_the_pipe_cuts_them(size, pieces):
    rng = random.Random(size + pieces)
    frames = [(AUDIO, rng.randbytes(rng.choice([0, 1, 5, 11, 4000, 20_000]))) for _ in range(40)]
    frames += [(AUDIO, rng.randbytes(300_000)), (FAILED, b'{"type":"X","message":"m"}'), (END, b"")]
    reading, writer = written(frames, pieces)
    with os.fdopen(reading, "rb", buffering=0) as pipe:
        reader = FrameReader(pipe, size)
        got = [reader.read() for _ in frames]
        with pytest.raises(BrokenStream, match="the pipe closed"):
            reader.read()
    writer.join(seconds(5))
    assert [(kind, bytes(payload)) for kind, payload in got] == frames
    got[0][1][:1] = b"\xff"  # each payload is its own, writable (the buffer is reused)
    assert bytes(got[1][1]) == frames[1][1]


@pytest.mark.parametrize(
    "stream, why",
    [
        (b"A" + (2**31).to_bytes(4, "little"), "a frame of"),
        (b"A" + (10).to_bytes(4, "little") + b"12345", "the pipe closed"),  # cut in its payload
        (b"A\x01", "the pipe closed"),  # cut in its header
    ],
)
def test_garbage_and_a_cut_frame_are_a_broken_stream(stream, why):
    reading, writing = os.pipe()
    os.write(writing, stream)
    os.close(writing)
    with os.fdopen(reading, "rb", buffering=0) as pipe, pytest.raises(BrokenStream, match=why):
        FrameReader(pipe, 4096).read()


class Waits:
    """A request deadline's face: records what the reader tells it."""

    def __init__(self) -> None:
        self.told: list[float | None] = []

    @property
    def waiting_since(self) -> float | None:
        return self.told[-1] if self.told else None

    @waiting_since.setter
    def waiting_since(self, value: float | None) -> None:
        self.told.append(value)


def test_the_deadline_is_told_of_each_read_that_waits_not_of_each_frame():
    reading, writing = os.pipe()
    write_frames(writing, [(AUDIO, b"x" * 400)] * 10)  # one write: one read brings them all
    with os.fdopen(reading, "rb", buffering=0) as pipe:
        reader = FrameReader(pipe, 1 << 20)
        reader.watch = waits = Waits()
        assert [len(reader.read()[1]) for _ in range(10)] == [400] * 10
        assert len(waits.told) == 2 and waits.told[0] is not None and waits.told[1] is None
        os.close(writing)
        with pytest.raises(BrokenStream):
            reader.read()
    assert waits.told[-1] is None  # a read that failed is no longer waiting


@pytest.mark.parametrize("pieces", [1, 300])
def test_a_buffer_that_starts_small_grows_to_what_the_reads_bring_and_no_further(pieces):
    rng = random.Random(pieces)
    frames = [(AUDIO, rng.randbytes(rng.choice([0, 7, 900, 20_000]))) for _ in range(60)] + [(END, b"")]
    reading, writer = written(frames, pieces)
    with os.fdopen(reading, "rb", buffering=0) as pipe:
        reader = FrameReader(pipe, 16, most=4096)
        got = [reader.read() for _ in frames]
    writer.join(seconds(5))
    assert [(kind, bytes(payload)) for kind, payload in got] == frames
    assert len(reader._buffer) in (32, 64, 128, 256, 512, 1024, 2048, 4096)


def test_a_childs_reader_holds_64_kib_until_its_reads_bring_more():
    """Each child's reader held a zero-filled 1 MiB from its start (resident in the worker: one a lane,
    one for ZipVoice's phonemizer, whose answers are a few hundred bytes); it now starts at 64 KiB and
    grows, no further than the pipe, only when a read fills it."""
    child = ChildEspeak()
    try:
        child.phonemize("오늘은 인공지능 음성 합성에 대해 이야기하겠습니다.", "ko")
        assert len(child._answers._buffer) == FIRST_ANSWER_BYTES == 64 * 1024
        made = sum(
            chunk.size for chunk in child.chunks(SynthesisRequest("오늘은 날씨가 맑겠습니다. " * 20, "ko"))
        )
        assert made > 24000 * 10
        assert FIRST_ANSWER_BYTES <= len(child._answers._buffer) <= ANSWER_BUFFER_BYTES == PIPE_BYTES
    finally:
        child.close()
