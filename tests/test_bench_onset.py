"""The benchmark's audible-onset detector and playback timeline on synthetic signals with known answers."""

import numpy as np
import pytest

from npu_worker import audio
from npu_worker.audio import audible_onset, to_pcm16
from npu_worker.bench.measure import Listener, RequestRecord
from npu_worker.bench.onset import PlaybackTimeline, onset_of

RATE = 24000
HOP = RATE // 100  # 10 ms


def tone(seconds: float, db: float = -20.0, freq: float = 220.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    amplitude = 10 ** (db / 20) * np.sqrt(2)  # RMS of the sine = db dBFS
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def assert_onset_near(found: int | None, true_sample: int) -> None:
    """The rule quantises to the 10 ms hop and reports the window that first holds the sound."""
    assert found is not None
    assert true_sample - HOP <= found <= true_sample, (found, true_sample)


def test_onset_of_tone_after_silence_is_where_the_tone_starts():
    signal = np.concatenate([silence(0.3137), tone(0.5)])
    assert_onset_near(audible_onset(signal, RATE), int(0.3137 * RATE))


def test_onset_at_the_very_first_sample():
    assert audible_onset(tone(0.2), RATE) == 0


def test_dc_offset_alone_is_not_audible():
    assert audible_onset(np.full(RATE, 0.4, dtype=np.float32), RATE) is None


def test_tone_riding_on_a_dc_offset_is_found_where_it_starts():
    signal = np.concatenate([silence(0.25), tone(0.5)]) + np.float32(0.4)
    assert_onset_near(audible_onset(signal, RATE), int(0.25 * RATE))


def test_sound_below_minus_45_dbfs_is_not_audible():
    assert audible_onset(tone(0.5, db=-50.0), RATE) is None


def test_sound_just_above_minus_45_dbfs_is_audible():
    signal = np.concatenate([silence(0.1), tone(0.5, db=-43.0)])
    assert_onset_near(audible_onset(signal, RATE), int(0.1 * RATE))


@pytest.mark.parametrize("click_ms", [0.05, 1.0, 3.0, 8.0])
@pytest.mark.parametrize("at_seconds", [0.1, 0.1051, 0.1097])
def test_a_short_click_does_not_count(click_ms, at_seconds):
    signal = silence(0.5)
    start = int(at_seconds * RATE)
    signal[start : start + max(1, int(click_ms * RATE / 1000))] = 0.9
    assert audible_onset(signal, RATE) is None


def test_a_click_before_speech_does_not_move_the_onset():
    signal = np.concatenate([silence(0.4), tone(0.5)])
    signal[int(0.1 * RATE) : int(0.1 * RATE) + 48] = -0.9  # 2 ms click at 100 ms
    assert_onset_near(audible_onset(signal, RATE), int(0.4 * RATE))


def test_too_short_a_signal_has_no_onset():
    assert audible_onset(tone(0.015), RATE) is None


def test_playback_starts_on_the_first_chunk_and_plays_chunks_back_to_back():
    timeline = PlaybackTimeline(RATE)
    timeline.add(1.0, RATE // 10)  # 100 ms arrives at t=1.0
    timeline.add(1.05, RATE // 10)  # arrives while the first still plays
    assert timeline.play_time(0) == pytest.approx(1.0)
    assert timeline.play_time(RATE // 10) == pytest.approx(1.1)
    assert timeline.play_time(RATE // 10 + RATE // 20) == pytest.approx(1.15)
    assert timeline.underruns == 0


def test_a_chunk_arriving_after_the_audio_ran_out_is_an_underrun():
    timeline = PlaybackTimeline(RATE)
    timeline.add(2.0, RATE // 10)  # plays 2.0 .. 2.1
    timeline.add(2.35, RATE // 10)  # 250 ms gap
    timeline.add(2.40, RATE // 10)  # queued behind: plays 2.45 .. 2.55
    assert timeline.underruns == 1
    assert timeline.underrun_seconds == pytest.approx(0.25)
    assert timeline.play_time(2 * RATE // 10) == pytest.approx(2.45)


def test_a_sample_that_was_never_received_has_no_play_time():
    timeline = PlaybackTimeline(RATE)
    timeline.add(0.0, 100)
    with pytest.raises(IndexError):
        timeline.play_time(100)


SIGNALS = {
    "silence-then-tone": np.concatenate([silence(0.4137), tone(1.0)]),
    "tone-at-once": tone(1.0),
    "click-then-tone": np.concatenate([silence(0.2), np.full(24, 0.9, np.float32), silence(0.3), tone(0.5)]),
    "quiet-all-through": tone(1.0, db=-60.0),
    "late-short-tone": np.concatenate([silence(0.93), tone(0.05)]),
}


def listened(signal: np.ndarray, frame_bytes: int) -> RequestRecord:
    """The figures a /ws listener records for `signal` arriving as frames of `frame_bytes` at t=1 s."""
    listener, pcm = Listener(t0=0.0, sample_rate=RATE), to_pcm16(signal).tobytes()
    for start in range(0, len(pcm), frame_bytes):
        listener.pcm(1.0, pcm[start : start + frame_bytes])
    record = RequestRecord("ws", 1.0, 0, 0, 0.0)
    listener.finish(record, sent_at=0.0, done_at=2.0)
    return record


@pytest.mark.parametrize("name", SIGNALS)
@pytest.mark.parametrize("frame_bytes", [4801, 9600, 10**7])  # odd sizes split samples across frames
def test_the_onset_found_on_the_way_is_the_one_of_the_whole_stream(name: str, frame_bytes: int):
    signal = np.round(SIGNALS[name] * 32767) / 32767  # what survives PCM16
    expected = audible_onset(signal.astype(np.float32), RATE)
    assert onset_of(signal, RATE) == expected
    record = listened(signal, frame_bytes)
    assert record.audio_sec == signal.size / RATE
    if expected is None:
        assert record.ttfa_ms is None and record.leading_silence_ms is None
    else:
        assert record.leading_silence_ms == pytest.approx(expected / RATE * 1000.0)
        assert record.ttfa_ms == pytest.approx(1000.0 + expected / RATE * 1000.0)


def test_the_onset_rule_reads_up_to_the_onset_not_the_whole_stream(monkeypatch):
    """The whole stream was analysed at its end, on the event loop that timestamps every other
    request: ~90 ms for a minute of audio, added to the figures of the streams running beside it."""
    read: list[int] = []

    def counting(samples: np.ndarray, *args: object) -> np.ndarray:
        read.append(np.asarray(samples).size)
        return window_levels(samples, *args)

    window_levels = audio.window_levels_db
    monkeypatch.setattr(audio, "window_levels_db", counting)
    minute = np.concatenate([silence(0.3), tone(60.0)])
    record = listened(minute, frame_bytes=RATE // 5 * 2)  # 0.2 s frames
    assert record.leading_silence_ms == pytest.approx(300.0, abs=10.0)
    assert sum(read) < 4 * RATE, sum(read)  # a few frames around the onset, not 60 s
    read.clear()
    assert onset_of(minute, RATE) is not None and sum(read) < 4 * RATE, sum(read)
