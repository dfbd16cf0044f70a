"""Pure audio helpers: wav round trip, resampling, the audible-onset rule, streaming trim, cross-fade."""

from __future__ import annotations

import io

import numpy as np
import pytest

from npu_worker import audio, audio_decode

RATE = 24000


def tone(seconds: float, amplitude: float = 0.3, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_wav_bytes_round_trip_within_one_lsb():
    samples = tone(0.5)
    decoded, rate = audio_decode.read_wav(audio.wav_bytes(samples, RATE))
    assert rate == RATE and decoded.size == samples.size
    assert np.max(np.abs(decoded - samples)) < 2.0 / 32767


@pytest.mark.parametrize(
    "data",
    [b"this is not audio at all" * 4, b"RIFF\x10\x00\x00\x00WAVEfmt " + bytes(8)],
    ids=["junk", "short-fmt"],
)
def test_bytes_that_are_not_a_wav_are_a_value_error_in_libsndfiles_words(data):
    """Not libsndfile's own message, which names the in-memory buffer's Python object and address."""
    with pytest.raises(ValueError) as caught:
        audio_decode.read_wav(data)
    reason = str(caught.value)
    assert reason and "object at" not in reason and "BytesIO" not in reason, reason
    if data.startswith(b"this"):
        assert reason == "Format not recognised."


def test_pcm16_clips_instead_of_wrapping():
    assert audio.to_pcm16(np.array([1.5, -1.5], dtype=np.float32)).tolist() == [32767, -32767]


def test_resample_keeps_duration():
    out = audio.resample(tone(1.0), RATE, 22050)
    assert abs(out.size - 22050) <= 2


def test_onset_of_silence_then_tone():
    signal = np.concatenate([np.zeros(int(0.3 * RATE), np.float32), tone(0.5)])
    onset = audio.audible_onset(signal, RATE)
    assert onset is not None and abs(onset - 0.3 * RATE) <= 0.02 * RATE


def test_dc_offset_alone_is_not_audible():
    assert audio.audible_onset(np.full(RATE, 0.2, np.float32), RATE) is None


def test_a_short_click_does_not_count():
    signal = np.zeros(RATE, np.float32)
    signal[1000:1100] = 0.9
    assert audio.audible_onset(signal, RATE) is None


@pytest.mark.parametrize("chunk", [240, 1000, 4800])
def test_streaming_trimmer_keeps_at_most_10ms_before_the_onset(chunk):
    signal = np.concatenate([np.zeros(int(0.5 * RATE), np.float32), tone(0.5)])
    trimmer = audio.LeadingSilenceTrimmer(RATE)
    out = np.concatenate(
        [trimmer.feed(signal[i : i + chunk]) for i in range(0, signal.size, chunk)] + [trimmer.flush()]
    )
    onset = audio.audible_onset(out, RATE)
    assert onset is not None and onset <= 0.010 * RATE + 240  # within one hop of the 10 ms budget
    assert out.size + trimmer.trimmed_samples == signal.size  # nothing after the onset is lost
    np.testing.assert_array_equal(out[-1000:], signal[-1000:])


def test_trimmer_returns_silence_it_held_when_nothing_is_audible():
    trimmer = audio.LeadingSilenceTrimmer(RATE)
    held = trimmer.feed(np.zeros(1000, np.float32))
    assert held.size == 0 and trimmer.flush().size == 1000


def test_crossfade_join_shortens_by_the_overlap():
    a, b = tone(0.5), tone(0.5, freq=330.0)
    joined = audio.crossfade_join([a, b], RATE, fade_ms=100.0)
    assert joined.size == a.size + b.size - int(0.1 * RATE)
    assert np.max(np.abs(joined)) <= 0.3 * 1.5


def test_pcm16_round_trip_is_exact_so_cached_audio_equals_fresh_audio():
    pcm = audio.to_pcm16(tone(0.2, amplitude=0.9))
    again = audio.to_pcm16(audio_decode.read_wav(audio.wav_bytes(audio.from_pcm16(pcm), RATE))[0])
    np.testing.assert_array_equal(again, pcm)


def test_non_finite_samples_are_a_value_error_naming_them():
    """A float wav can hold NaN: it passed every check and made the ZipVoice prompt (and output) NaN."""
    import soundfile

    samples = tone(0.5)
    samples[10] = np.nan
    samples[20] = np.inf
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, RATE, format="WAV", subtype="FLOAT")
    with pytest.raises(ValueError, match="2 of 12000 samples are not finite numbers"):
        audio_decode.read_wav(buffer.getvalue())


def test_one_non_finite_sample_is_named_in_the_singular():
    """One NaN in a `ref_wav` was "1 of 12000 samples are not finite numbers"."""
    import soundfile

    samples = tone(0.5)
    samples[10] = np.nan
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, RATE, format="WAV", subtype="FLOAT")
    with pytest.raises(ValueError, match=r"^1 of 12000 samples is not a finite number \(NaN or infinity\)$"):
        audio_decode.read_wav(buffer.getvalue())


def test_audio_longer_than_the_limit_is_refused_before_decoding():
    data = audio.wav_bytes(tone(2.0), RATE)
    assert audio_decode.read_wav(data, max_seconds=2.0)[0].size == 2 * RATE
    with pytest.raises(ValueError, match="2.0 s long, the limit is 1.5 s"):
        audio_decode.read_wav(data, max_seconds=1.5)


def test_an_upload_with_nan_samples_is_refused_as_such_not_as_silent():
    import soundfile

    from npu_worker.protocol import InvalidAudio
    from npu_worker.voices import UploadLimits, decode_upload

    samples = np.stack([tone(1.0), tone(1.0)], axis=1)
    samples[5, 1] = np.nan
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, RATE, format="WAV", subtype="FLOAT")
    with pytest.raises(InvalidAudio, match="holds 1 sample that is not a finite number"):
        decode_upload(buffer.getvalue(), UploadLimits(max_bytes=1 << 20, max_seconds=30.0))


def sliding_window_onset(samples: np.ndarray, rate: int, k: int = audio.ONSET_CONSECUTIVE) -> int | None:
    """The onset rule as written with `window_levels_db`'s sliding windows (the reference)."""
    hop = round(rate * audio.ONSET_HOP_MS / 1000)
    windows = audio.window_levels_db(samples, rate) >= audio.ONSET_THRESHOLD_DB
    hops = (
        audio.window_levels_db(samples, rate, audio.ONSET_HOP_MS, audio.ONSET_HOP_MS)
        >= audio.ONSET_THRESHOLD_DB
    )
    for start in range(windows.size - k + 1):
        if windows[start : start + k].all() and start + k < hops.size and hops[start] and hops[start + k]:
            return start * hop
    return None


def test_the_onset_from_hop_sums_is_the_sliding_windows_onset():
    """At 24 kHz a window is two hops: the onset comes from each hop's sums, not from two passes of
    sliding windows and logarithms (the engine thread's search on a preview's first chunk, under the
    GIL beside the event loop); the same onset on levels around the threshold, with and without DC."""
    rng = np.random.default_rng(5)
    rate = 24000
    loud = 10 ** (audio.ONSET_THRESHOLD_DB / 20)
    for case in range(300):
        size = int(rng.integers(0, 6000))
        levels = loud * rng.choice([0.0, 0.5, 0.9, 1.1, 2.0, 30.0], size=max(1, size // 200 + 1))
        envelope = np.repeat(levels, 200)[:size]
        envelope[: int(rng.integers(0, size + 1))] *= 0.4  # a quieter lead of any length
        signal = (rng.standard_normal(size) * envelope).astype(np.float32)
        if case % 3 == 0:
            signal += np.float32(rng.uniform(-0.5, 0.5))
        assert audio.audible_onset(signal, rate) == sliding_window_onset(signal, rate), case


def test_a_rule_of_another_run_length_finds_the_sliding_windows_onset_too():
    """`consecutive` other than the default two windows takes its own path (`np.convolve` with a
    kernel made for it; the default's goes to numpy's C `correlate`): the reference's onset for runs
    of one, three and five windows, at 24 kHz and at a rate whose windows are not two hops."""
    rng = np.random.default_rng(57)
    loud = 10 ** (audio.ONSET_THRESHOLD_DB / 20)
    found = 0
    for case in range(240):
        rate, k = (24000, 44100)[case % 2], (1, 3, 5)[case % 3]
        size = int(rng.integers(0, 9000))
        levels = loud * rng.choice([0.0, 0.5, 1.1, 2.0, 30.0], size=max(1, size // 300 + 1))
        signal = (rng.standard_normal(size) * np.repeat(levels, 300)[:size]).astype(np.float32)
        onset = audio.audible_onset(signal, rate, consecutive=k)
        assert onset == sliding_window_onset(signal, rate, k), (case, rate, k)
        found += onset is not None
    assert found > 40  # (the runs were found, not only ruled out)


def test_the_onset_at_24_khz_needs_no_sliding_windows(monkeypatch):
    tone = np.concatenate([np.zeros(2400), 0.2 * np.sin(np.arange(4800) * 0.1)]).astype(np.float32)
    expected = sliding_window_onset(tone, 24000)
    assert expected is not None

    def refused(*args: object, **kwargs: object) -> np.ndarray:
        raise AssertionError("two passes of sliding windows")

    monkeypatch.setattr(audio, "window_levels_db", refused)
    assert audio.audible_onset(tone, 24000) == expected
