"""The espeak child's writes of its frames (benchmarks/SERVER_OVERHEAD.md, stop 57): a chunk held as the
engine's array itself (no memoryview cast) and a write of held frames as one `writev` with no part
popped (the frames were cut into views and each written one popped with two `len`s: ≈ 95 calls a
preview in the child); the same bytes on the pipe, a short write's rest included."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import threading
from typing import Any

import numpy as np

from npu_worker.engine import espeak_child
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.engine.espeak_child import (
    AUDIO,
    END,
    END_HEADER,
    HEADER,
    IOV_PARTS,
    REQUEST,
    _Child,
    read_frame,
    write_frame,
    write_frames,
    write_parts,
)
from npu_worker.engine.espeak_frame_reader import FrameReader
from tests.call_counting import c_calls_of


def drained(read_end: int, into: bytearray) -> threading.Thread:
    def drain() -> None:
        while data := os.read(read_end, 1 << 16):
            into.extend(data)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread


def test_frames_and_parts_write_the_same_bytes_whole_or_in_pieces() -> None:
    samples = [np.linspace(-1, 1, n, dtype=np.float32) for n in (1, 4800, 70_000)]  # 280 KB: > a pipe
    frames = [(AUDIO, s.tobytes()) for s in samples] * 3 + [(END, b"")]
    expected = b"".join(HEADER.pack(kind, len(payload)) + payload for kind, payload in frames)
    parts = [p for s in samples * 3 for p in (HEADER.pack(AUDIO, s.nbytes), s)] + [HEADER.pack(END, 0), b""]
    for write in (
        lambda fd: write_frames(fd, frames),
        lambda fd: write_parts(fd, parts, len(expected)),
        lambda fd: write_parts(fd, parts, 1),  # a wrong size: the rest from the parts
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
    with os.fdopen(requests_read, "rb", buffering=0) as requests:
        child = _Child(requests, out_write)
        child.engine.load()
        request = b'{"id": 1, "text": "%s", "lang": "ko", "speed_factor": 1.0}' % text.encode()
        write_frame(requests_write, REQUEST, request)
        _, payload = read_frame(child.requests)
        called = c_calls_of(lambda: child._synthesise(payload))
    os.close(out_write)
    os.close(requests_write)
    thread.join(10)
    os.close(out_read)
    assert len(chunks) >= 3 and called.count("writev") >= 1  # (how many: the hold's timing, not counted here)
    assert called.count("pop") == 0 and called.count("cast") == 0, called
    with _pipe_of(bytes(got)) as audio:
        reader = FrameReader(audio, 1 << 16)
        frames = [reader.read() for _ in range(len(chunks) + 1)]
    assert [bytes(p) for k, p in frames if k == AUDIO] == chunks
    assert frames[-1] == (END, bytearray())


def _pipe_of(data: bytes) -> Any:
    """A pipe's read end (the caller closes it) holding `data`, written by a thread of its own."""
    read_end, write_end = os.pipe()
    threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)), daemon=True).start()
    return os.fdopen(read_end, "rb", buffering=0)


def _written_through_a_signal(parts: list[Any], size: int) -> bytes:
    """`write_parts` into a real pipe of one page with no reader yet: the kernel takes 4096 bytes, and a
    signal then ends the blocked `writev` short (Linux returns what it wrote); the handler starts the
    reader, so what follows is the resumed rest. The interval timer keeps firing (a signal before the
    next `writev` blocks is retried, PEP 475), so a later `writev` may be cut short again, anywhere."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    got, reading = bytearray(), threading.Event()

    def drain() -> None:
        reading.wait()
        while data := os.read(read_end, 1 << 16):
            got.extend(data)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    before = signal.signal(signal.SIGALRM, lambda *_: reading.set())
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    try:
        write_parts(write_end, parts, size)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
        reading.set()
        os.close(write_end)
    thread.join(10)
    os.close(read_end)
    return bytes(got)


def test_a_write_cut_short_by_a_signal_goes_on_from_inside_a_header_an_array_or_a_parts_end() -> None:
    """The pipe's 4096th byte falls inside the second header, inside an array, at an array's end and
    at a header's end: the stream on the pipe is the parts' bytes in order each time (a short write was
    only a wrong `size` in the test above: a blocking pipe takes a whole `writev` unless a signal cuts it)."""
    tail = [np.linspace(-1, 1, 20_000, dtype=np.float32), b"", END_HEADER]
    layouts = {
        "inside a header": [HEADER.pack(AUDIO, 4088), np.ones(1022, dtype=np.float32)],
        "inside an array": [HEADER.pack(AUDIO, 8000), np.arange(2000, dtype=np.float32)],
        "at an array's end": [
            b"\x01\x02\x03",
            HEADER.pack(AUDIO, 4088),
            np.full(1022, 0.5, dtype=np.float32),
        ],
        "at a header's end": [HEADER.pack(AUDIO, 4086), bytes(range(256)) * 15 + bytes(246)],
    }
    for where, head in layouts.items():
        parts = head + [HEADER.pack(AUDIO, tail[0].nbytes), *tail]
        expected = b"".join(bytes(memoryview(p).cast("B")) for p in parts)
        assert _written_through_a_signal(parts, len(expected)) == expected, where


def written_by_the_child(text: str, early_audio: bool) -> tuple[int, list[tuple[bytes, bytearray]]]:
    """The child's `writev` calls for one request of `text`, and the frames they wrote."""
    requests_read, requests_write = os.pipe()
    out_read, out_write = os.pipe()
    got = bytearray()
    thread = drained(out_read, got)
    with os.fdopen(requests_read, "rb", buffering=0) as requests:
        child = _Child(requests, out_write)
        child.engine.load()
        request = {"id": 1, "text": text, "lang": "ko", "speed_factor": 1.0, "early_audio": early_audio}
        write_frame(requests_write, REQUEST, json.dumps(request).encode())
        _, payload = read_frame(child.requests)
        called = c_calls_of(lambda: child._synthesise(payload))
    os.close(out_write)
    os.close(requests_write)
    thread.join(10)
    os.close(out_read)
    frames = []
    with _pipe_of(bytes(got)) as audio:
        reader = FrameReader(audio, 1 << 16)
        while not frames or frames[-1][0] != END:
            frames.append(reader.read())
    return called.count("writev"), frames


def test_a_request_nobody_listens_to_has_its_first_frame_held_with_the_rest(monkeypatch) -> None:
    """A `/synth` or a batch section reads none of its audio before its end, yet the child wrote its first
    frame alone at once, as a preview's: a wake-up of the engine thread, a read and a GIL hand-off a
    section for nothing (benchmarks/SERVER_OVERHEAD.md, stop 59). The bytes are the same; a listened
    request's first frame still goes at once. (The hold made long: the count is the rule's, not timing's.)"""
    monkeypatch.setattr(espeak_child, "HOLD_SECONDS", 60.0)
    text = "첫 문장은 짧습니다. 두 번째 문장도 짧습니다."  # (under the half pipe a write holds at most)
    listened_writes, listened = written_by_the_child(text, early_audio=True)
    held_writes, held = written_by_the_child(text, early_audio=False)
    assert len(held) >= 3 and held == listened
    assert (listened_writes, held_writes) == (2, 1)
