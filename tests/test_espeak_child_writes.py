"""The espeak child's writes of its frames (benchmarks/SERVER_OVERHEAD.md, stop 57): a chunk held as the
engine's array itself (no memoryview cast) and a write of held frames as one `writev` with no part
popped (the frames were cut into views and each written one popped with two `len`s: ≈ 95 calls a
preview in the child); the same bytes on the pipe, a short write's rest included."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import numpy as np

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.engine.espeak_child import (
    AUDIO,
    END,
    HEADER,
    IOV_PARTS,
    REQUEST,
    FrameReader,
    _Child,
    write_frame,
    write_frames,
)


def drained(read_end: int, into: bytearray) -> threading.Thread:
    def drain() -> None:
        while data := os.read(read_end, 1 << 16):
            into.extend(data)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread


def test_frames_and_parts_write_the_same_bytes_whole_or_in_pieces() -> None:
    from npu_worker.engine.espeak_child import write_parts

    samples = [np.linspace(-1, 1, n, dtype=np.float32) for n in (1, 4800, 70_000)]  # 280 KB: > a pipe
    frames = [(AUDIO, s.tobytes()) for s in samples] * 3 + [(END, b"")]
    expected = b"".join(HEADER.pack(kind, len(payload)) + payload for kind, payload in frames)
    for write in (
        lambda fd: write_frames(fd, frames),
        lambda fd: write_parts(
            fd,
            [p for s in samples * 3 for p in (HEADER.pack(AUDIO, s.nbytes), s)] + [HEADER.pack(END, 0), b""],
            len(expected),
        ),
        lambda fd: write_parts(
            fd,
            [p for s in samples * 3 for p in (HEADER.pack(AUDIO, s.nbytes), s)] + [HEADER.pack(END, 0), b""],
            1,
        ),  # a wrong size: the rest from the parts
    ):
        read_end, write_end = os.pipe()
        got = bytearray()
        thread = drained(read_end, got)
        write(write_end)
        os.close(write_end)
        thread.join(10)
        os.close(read_end)
        assert bytes(got) == expected


def test_more_frames_than_one_writev_takes_arrive_in_order() -> None:
    frames = [(AUDIO, i.to_bytes(4, "little")) for i in range(IOV_PARTS)]  # 2 × IOV_PARTS parts
    read_end, write_end = os.pipe()
    got = bytearray()
    thread = drained(read_end, got)
    write_frames(write_end, frames)
    os.close(write_end)
    thread.join(10)
    os.close(read_end)
    assert bytes(got) == b"".join(HEADER.pack(AUDIO, 4) + p for _, p in frames)


def c_calls_of(work: Any) -> list[str]:
    called: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            called.append(getattr(arg, "__name__", repr(arg)))

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return called


def test_the_child_writes_held_frames_whole_and_the_engines_chunks_byte_for_byte() -> None:
    text = "첫 문장은 짧습니다. 두 번째 문장은 조금 더 길어서 여러 조각으로 나뉘어 전해집니다. 끝."
    engine = EspeakEngine()
    engine.load()
    chunks: list[bytes] = []
    engine.stream_into(SynthesisRequest(text, "ko", 1.0), lambda c: chunks.append(c.tobytes()) or True)
    requests_read, requests_write = os.pipe()
    out_read, out_write = os.pipe()
    got = bytearray()
    thread = drained(out_read, got)
    child = _Child(os.fdopen(requests_read, "rb", buffering=0), out_write)
    child.engine.load()
    write_frame(
        requests_write, REQUEST, b'{"id": 1, "text": "%s", "lang": "ko", "speed_factor": 1.0}' % text.encode()
    )
    from npu_worker.engine.espeak_child import read_frame

    _, payload = read_frame(child.requests)
    called = c_calls_of(lambda: child._synthesise(payload))
    os.close(out_write)
    os.close(requests_write)
    thread.join(10)
    assert len(chunks) >= 3 and called.count("writev") >= 1  # (how many: the hold's timing, not counted here)
    assert called.count("pop") == 0 and called.count("cast") == 0, called
    reader = FrameReader(_pipe_of(bytes(got)), 1 << 16)
    frames = [reader.read() for _ in range(len(chunks) + 1)]
    assert [bytes(p) for k, p in frames if k == AUDIO] == chunks
    assert frames[-1] == (END, bytearray())


def _pipe_of(data: bytes) -> Any:
    read_end, write_end = os.pipe()
    threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)), daemon=True).start()
    return os.fdopen(read_end, "rb", buffering=0)
