"""The streaming joiner gives the offline join (cross-fade, edge trim) while streaming."""

import numpy as np
import pytest

from npu_worker.audio import crossfade_join
from npu_worker.engine.zipvoice.features import trim_edge_silence
from npu_worker.engine.zipvoice.joiner import StreamJoiner

SR = 24000


def tone(seconds, freq, lead=0.0, tail=0.0):
    t = np.arange(int(SR * seconds)) / SR
    body = 0.3 * np.sin(2 * np.pi * freq * t)
    return np.concatenate([np.zeros(int(SR * lead)), body, np.zeros(int(SR * tail))]).astype(np.float32)


def stream(segments, piece):
    joiner = StreamJoiner(SR, fade_ms=100.0)
    out = []
    for segment in segments:
        out.append(joiner.start_segment())
        for start in range(0, segment.size, piece):
            out.append(joiner.feed(segment[start : start + piece]))
    out.append(joiner.finish())
    return out


@pytest.mark.parametrize("piece", [1000, 2400, 7777, 100000])
def test_streamed_join_equals_the_offline_cross_fade_and_edge_trim(piece):
    segments = [tone(0.5, 220, lead=0.3), tone(0.04, 330), tone(0.8, 440, tail=0.4), tone(0.6, 550, tail=0.5)]
    expected = trim_edge_silence(crossfade_join(segments, SR, 100.0), SR)
    got = np.concatenate(stream(segments, piece))
    assert got.size == expected.size
    assert np.allclose(got, expected, atol=1e-6)


def test_audio_leaves_before_the_segment_ends():
    out = stream([tone(2.0, 220)], piece=4800)
    released = np.cumsum([chunk.size for chunk in out])
    assert released[3] > 0  # after three pieces (0.6 s) audio is already out


def test_internal_pauses_stay_and_a_silent_request_gives_nothing():
    gap = np.zeros(SR // 2, dtype=np.float32)
    segment = np.concatenate([tone(0.3, 220), gap, tone(0.3, 220)])
    assert np.concatenate(stream([segment], 2400)).size == segment.size
    assert np.concatenate(stream([np.zeros(SR, np.float32)], 2400)).size == 0
