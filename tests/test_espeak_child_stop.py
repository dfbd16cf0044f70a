"""The espeak child answers a `STOP` while it holds a request's later frames, not only at their write:
espeak runs on while frames are held, and a stop looked for only at the write kept the lane making audio
nobody takes for the whole hold (a cancel answered ≈ 10 ms late, the caller's next request waiting)."""

from __future__ import annotations

import os

import numpy as np

from npu_worker.engine import espeak_child
from npu_worker.engine.espeak_child import AUDIO, END, REQUEST_ID, STOP, read_frame, write_frame

LONG_TEXT = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다." * 30


class CountingChild(espeak_child._Child):
    """The child's own loop, counting the chunks its espeak made."""

    made = 0

    def _send(self, chunk: np.ndarray) -> bool:
        self.made += 1
        return super()._send(chunk)


def test_a_stop_waiting_while_frames_are_held_ends_the_synthesis_at_the_next_chunk(monkeypatch):
    # A hold that never runs out and a look at every chunk: only the look can end the synthesis early
    monkeypatch.setattr(espeak_child, "HOLD_SECONDS", 3600.0)
    monkeypatch.setattr(espeak_child, "STOP_LOOK_SECONDS", 0.0, raising=False)
    requests_read, requests_write = os.pipe()
    answers_read, answers_write = os.pipe()
    with os.fdopen(requests_read, "rb", buffering=0) as requests, os.fdopen(answers_read, "rb") as answers:
        child = CountingChild(requests, answers_write)
        child.engine.load()
        write_frame(requests_write, STOP, REQUEST_ID.pack(7))  # there before the first frame
        payload = b'{"id": 7, "text": "%s", "lang": "ko", "speed_factor": 1.0}' % LONG_TEXT.encode()
        child._synthesise(bytearray(payload))
        os.close(answers_write)
        kinds = []
        while True:
            try:
                kinds.append(read_frame(answers)[0])
            except espeak_child.BrokenStream:
                break
        os.close(requests_write)
        child.engine.close()
    assert kinds == [AUDIO, END]  # the first frame, then the stop's END: the held audio dropped
    assert child.made == 2  # the first chunk, then the one that found the STOP
