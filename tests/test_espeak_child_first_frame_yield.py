"""The espeak child gives its core up once a listened request's first frame is written (benchmarks/
SERVER_OVERHEAD.md, 2026-12-08, stop 64: the lane's write of the request woke the child on the lane's
core, and the child went on making audio while the lane, runnable, waited there to read that frame).
The yield comes right after that frame's write and nowhere else; a request nobody listens to (its frames
all held to its end, no reader waiting) does not yield; the frames on the pipe are the same bytes."""

from __future__ import annotations

import json
import os
import threading

from npu_worker.engine.espeak_child import END, REQUEST, _Child, read_frame, write_frame
from npu_worker.engine.espeak_frame_reader import FrameReader
from tests.call_counting import c_calls_of

TEXT = "첫 문장은 짧습니다. 두 번째 문장은 조금 더 길어서 여러 조각으로 나뉘어 전해집니다. 끝."


def made_by_the_child(early_audio: bool) -> tuple[list[str], list[tuple[bytes, bytes]]]:
    """The builtins a real child calls making one request of `TEXT` over real pipes, and its frames."""
    requests_read, requests_write = os.pipe()
    out_read, out_write = os.pipe()
    got = bytearray()

    def drain() -> None:
        while data := os.read(out_read, 1 << 16):
            got.extend(data)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    with os.fdopen(requests_read, "rb", buffering=0) as requests:
        child = _Child(requests, out_write)
        child.engine.load()
        request = {"id": 1, "text": TEXT, "lang": "ko", "speed_factor": 1.0, "early_audio": early_audio}
        write_frame(requests_write, REQUEST, json.dumps(request).encode())
        _, payload = read_frame(child.requests)
        called = c_calls_of(lambda: child._synthesise(payload))
    os.close(out_write)
    os.close(requests_write)
    thread.join(10)
    read_back, write_back = os.pipe()  # (the frames read back as the lane reads them: from a pipe)
    threading.Thread(target=lambda: (os.write(write_back, got), os.close(write_back)), daemon=True).start()
    frames: list[tuple[bytes, bytes]] = []
    with os.fdopen(read_back, "rb", buffering=0) as audio:
        reader = FrameReader(audio, 1 << 16)
        while not frames or frames[-1][0] != END:
            kind, frame = reader.read()
            frames.append((kind, bytes(frame)))
    os.close(out_read)
    return called, frames


def test_a_listened_requests_child_yields_once_right_after_writing_its_first_frame() -> None:
    called, frames = made_by_the_child(early_audio=True)
    assert len(frames) >= 3  # (two audio frames at least, then the END)
    assert called.count("sched_yield") == 1, called
    first_write = called.index("writev")
    assert called[first_write + 1] == "sched_yield", called[first_write : first_write + 3]


def test_a_request_nobody_listens_to_does_not_yield_and_its_frames_are_the_same() -> None:
    listened_calls, listened = made_by_the_child(early_audio=True)
    held_calls, held = made_by_the_child(early_audio=False)
    assert "sched_yield" not in held_calls
    assert held == listened
