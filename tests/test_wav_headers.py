"""WAV headers libsndfile reads as other audio than they hold: refused in words that name the header."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from npu_worker.audio_decode import read_wav
from npu_worker.protocol import InvalidAudio
from npu_worker.voice_upload import UploadLimits, decode_upload

LIMITS = UploadLimits(max_bytes=1 << 20, max_seconds=30.0)
RATE = 16_000


def wav(
    pcm: bytes, *, bits: int, block: int, channels: int = 1, stated: int | None = None, tag: int = 1
) -> bytes:
    """A RIFF/WAVE file of `pcm` whose header says what it is told to, true or not."""
    fmt = struct.pack("<HHIIHH", tag, channels, RATE, RATE * block, block, bits)
    if tag == 0xFFFE:  # WAVE_FORMAT_EXTENSIBLE: valid bits, channel mask, the PCM sub-format's GUID
        guid = struct.pack("<IHH", 1, 0, 0x10) + bytes([0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71])
        fmt += struct.pack("<HHI", 22, 24, 4) + guid
    size = len(pcm) if stated is None else stated
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", size) + pcm
    return b"RIFF" + struct.pack("<I", len(body)) + body


def tone(seconds: float) -> np.ndarray:
    return 0.4 * np.sin(np.arange(int(seconds * RATE)) * (2 * np.pi * 220 / RATE))


def test_seven_bit_samples_in_two_byte_frames_are_refused_not_read_at_twice_their_length():
    """libsndfile read each byte as an 8-bit frame: 2 s of audio came back as 4 s of noise."""
    pcm = (tone(2.0) * 32767).astype("<i2").tobytes()
    with pytest.raises(
        InvalidAudio, match=r"7-bit samples in 1 channel\(s\), 1 byte\(s\) a frame, but frames of 2"
    ):
        decode_upload(wav(pcm, bits=7, block=2), LIMITS)
    with pytest.raises(ValueError, match="frames of 2 bytes"):
        read_wav(wav(pcm, bits=7, block=2))


def test_a_data_chunk_stated_as_empty_with_samples_after_it_is_refused_as_such_not_as_0_s_long():
    pcm = (tone(2.0) * 32767).astype("<i2").tobytes()
    with pytest.raises(InvalidAudio, match=f"0 bytes long, but {len(pcm)} bytes follow") as refused:
        decode_upload(wav(pcm, bits=16, block=2, stated=0), LIMITS)
    assert "0.00 s" not in str(refused.value)


@pytest.mark.parametrize(
    ("bits", "block", "dtype", "tag"),
    [(16, 2, "<i2", 1), (12, 2, "<i2", 1), (32, 4, "<i4", 0xFFFE)],  # the last: 24 valid bits in 32
)
def test_headers_whose_frames_fit_their_samples_read_as_before(bits, block, dtype, tag):
    scale = 32767 if dtype == "<i2" else 2**31 - 1
    pcm = (tone(1.0) * scale).astype(dtype).tobytes()
    samples, rate = decode_upload(wav(pcm, bits=bits, block=block, tag=tag), LIMITS)
    assert rate == RATE and samples.size == RATE
    assert np.max(np.abs(samples - tone(1.0))) < 1e-3
