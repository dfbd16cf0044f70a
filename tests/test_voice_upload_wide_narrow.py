"""Samples of a width short of whole bytes past 8 bits, 12-bit in 2-byte frames and 20-bit in 3-byte frames: a
WAV keeps them in the high bits, so libsndfile reads them at their level there; written right-aligned they were
stored at 1/16 of it (a voice 24 dB quiet, ZipVoice then speaking as quietly), as only 1-7-bit ones were refused."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from npu_worker.protocol import InvalidAudio
from npu_worker.voice_upload import UploadLimits, decode_upload

pytestmark = pytest.mark.allow_blocking  # no event loop

LIMITS = UploadLimits(max_bytes=1 << 22, max_seconds=30.0)
RATE = 16_000
TONE = 0.8 * np.sin(np.arange(RATE) * (2 * np.pi * 220 / RATE))


def wav(samples: np.ndarray, bits: int, width: int, order: str = "<") -> bytes:
    """A RIFF (or big-endian RIFX) WAV of `bits`-bit samples, each in `width` bytes as they are given."""
    whole = samples.astype(order + "i4").tobytes()
    pcm = b"".join(
        whole[i + 4 - width : i + 4] if order == ">" else whole[i : i + width]
        for i in range(0, len(whole), 4)
    )
    fmt = struct.pack(order + "HHIIHH", 1, 1, RATE, RATE * width, width, bits)
    body = (
        b"WAVEfmt " + struct.pack(order + "I", 16) + fmt + b"data" + struct.pack(order + "I", len(pcm)) + pcm
    )
    return (b"RIFX" if order == ">" else b"RIFF") + struct.pack(order + "I", len(body)) + body


@pytest.mark.parametrize(("bits", "width"), [(12, 2), (20, 3), (14, 2)])
@pytest.mark.parametrize("order", ["<", ">"])
def test_right_aligned_samples_wider_than_a_byte_are_refused_by_name(bits, width, order):
    right_aligned = np.rint(TONE * (2 ** (bits - 1) - 1))
    with pytest.raises(InvalidAudio, match=rf"{bits}-bit samples.*low {8 * width - bits} bit.*right-aligned"):
        decode_upload(wav(right_aligned, bits, width, order), LIMITS)


@pytest.mark.parametrize(("bits", "width"), [(12, 2), (20, 3)])
def test_samples_in_the_high_bits_are_read_at_their_level(bits, width):
    high = np.rint(TONE * (2 ** (bits - 1) - 1)).astype(np.int64) << (8 * width - bits)
    samples, _rate = decode_upload(wav(high, bits, width), LIMITS)
    assert np.abs(samples - TONE).max() < 2 / 2 ** (bits - 1) + 1e-4
