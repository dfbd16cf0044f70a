"""A `ref_wav` bounded in samples to decode as a voice upload is: channels × frames at most what 8
channels at 192 kHz hold for its seconds' bound. It was bounded only by its length in seconds and its
bytes, which a codec's are not (a few KB of 64-channel Ogg Vorbis: seconds of CPU to decode)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile

from npu_worker.audio_decode import read_wav

RATE, FRAMES = 192_000, 96_000  # 0.5 s, under the 0.55 s bound below


def pcm8(channels: int) -> bytes:
    tone = 0.4 * np.sin(np.arange(FRAMES) * (2 * np.pi * 220 / RATE))[:, None]
    buffer = io.BytesIO()
    soundfile.write(buffer, np.tile(tone, (1, channels)), RATE, format="WAV", subtype="PCM_U8")
    return buffer.getvalue()


def test_more_samples_than_8_channels_at_192_khz_hold_are_refused_before_they_are_decoded():
    with pytest.raises(ValueError, match=r"9 channels of 96000 frames.*limit is 844800.*send mono"):
        read_wav(pcm8(9), 0.55, to_rate=24_000)


def test_8_channels_at_192_khz_are_read():
    samples, rate = read_wav(pcm8(8), 0.55, to_rate=24_000)
    assert rate == 24_000 and samples.size == FRAMES // 8


def test_without_a_bound_in_seconds_nothing_is_bounded():  # (the worker's own wavs, the benchmark's)
    samples, _rate = read_wav(pcm8(9))
    assert samples.size == FRAMES
