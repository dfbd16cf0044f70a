"""Mel features, STFT/ISTFT, RMS normalisation and silence handling pinned on known signals."""

import numpy as np
import pytest

from npu_worker.engine.zipvoice import features as feat

SR = 24000


def sine(freq, seconds, amplitude=0.5):
    t = np.arange(int(SR * seconds)) / SR
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_frame_count_is_lhotse_rounding():
    assert feat.frame_count(24000) == 94  # (24000 + 128) // 256
    assert feat.frame_count(255) == 1
    assert feat.frame_count(127) == 0
    assert feat.log_mel(np.zeros(24000, np.float32)).shape == (94, 100)


def test_mel_of_silence_is_the_log_floor():
    assert np.allclose(feat.log_mel(np.zeros(4096, np.float32)), np.log(1e-7))


def test_mel_of_a_bin_centred_sine_is_three_hann_bins_through_the_htk_filters():
    # 1500 Hz is bin 64 of a 1024-point FFT at 24 kHz: periodic Hann gives |X| = A·N/4 there and
    # A·N/8 in the two neighbours, zero elsewhere.
    mel = feat.log_mel(sine(1500.0, 1.0))
    bank = feat.mel_filterbank(SR, 1024, 100)
    expected = np.log(np.maximum(bank[63] * 64 + bank[64] * 128 + bank[65] * 64, 1e-7))
    interior = mel[10:-10]
    bands = expected > np.log(1e-2)  # elsewhere only float32 rounding noise of the input remains
    assert bands.sum() >= 2
    assert np.allclose(interior[:, bands], expected[bands][None, :], atol=2e-3)
    assert (interior[:, ~bands] < np.log(1e-2)).all()
    # 1500 Hz is 1290.6 mel (HTK); band k is centred at (k + 1)·3266.3/101 mel → band 39.
    assert int(np.argmax(interior[0])) == 39


def test_mel_filterbank_is_htk_triangles_without_norm():
    bank = feat.mel_filterbank(SR, 1024, 100)
    assert bank.shape == (513, 100)
    assert bank.min() == 0.0 and bank.max() <= 1.0
    assert bank[0].sum() == 0.0  # 0 Hz is the lower edge of the first triangle


@pytest.mark.parametrize("frames", [2, 5, 40])
def test_stft_then_istft_gives_the_signal_back(frames):
    signal = np.random.default_rng(0).standard_normal(256 * (frames - 1)).astype(np.float32) * 0.3
    spectrum = feat.stft(signal)
    assert spectrum.shape == (513, frames)
    restored = feat.istft(spectrum)
    assert restored.shape == signal.shape
    assert np.allclose(restored, signal, atol=1e-5)


def test_rms_normalisation_round_trip_restores_a_quiet_prompt_level():
    quiet = sine(220.0, 0.5, amplitude=0.02)
    scaled, level = feat.rms_normalise(quiet, 0.1)
    assert feat.rms(scaled) == pytest.approx(0.1, rel=1e-4)
    assert level == pytest.approx(0.02 / np.sqrt(2), rel=1e-3)
    assert np.allclose(feat.rms_restore(scaled, level, 0.1), quiet, atol=1e-7)


def test_rms_normalisation_leaves_a_loud_prompt_alone():
    loud = sine(220.0, 0.5, amplitude=0.5)
    scaled, level = feat.rms_normalise(loud, 0.1)
    assert np.array_equal(scaled, loud)
    assert np.array_equal(feat.rms_restore(loud, level, 0.1), loud)


def test_edge_silence_is_cut_in_10ms_chunks():
    audio = np.concatenate([np.zeros(2400), sine(300.0, 0.5), np.zeros(4800)]).astype(np.float32)
    trimmed = feat.trim_edge_silence(audio, SR)
    assert trimmed.size == 12000
    assert np.array_equal(trimmed, audio[2400:14400])


def test_long_internal_pauses_are_shortened_and_short_ones_kept():
    speech = sine(300.0, 0.3)
    long_gap, short_gap = np.zeros(int(SR * 1.5)), np.zeros(int(SR * 0.2))
    audio = np.concatenate([speech, long_gap, speech, short_gap, speech]).astype(np.float32)
    out = feat.shorten_pauses(audio, SR, max_pause_s=0.4)
    assert out.size == pytest.approx(3 * speech.size + SR * 0.4 + short_gap.size, abs=240)
    spans = feat.pause_spans(out, SR, 0.1)
    assert [round((e - s) / SR, 2) for s, e in spans] == [0.4, 0.2]
