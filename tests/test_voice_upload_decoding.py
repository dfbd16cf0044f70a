"""A voice upload decoded (`voices.decode_upload`, `audio_decode.read_wav`): many channels and high
rates read a bounded block at a time and resampled as read, rates no voice is recorded at, a constant
level, a file that does not say its length and a header whose rate is 0 refused in the file's words.

Apart from test_voices.py (the library: names, lookups, inline voices, folders) because these test
what the bytes decode to, not where a voice is kept.
"""

from __future__ import annotations

import io
import os
import struct
import tracemalloc

import numpy as np
import pytest
import soundfile

from npu_worker.audio import resample
from npu_worker.audio_decode import read_wav
from npu_worker.protocol import InvalidAudio
from npu_worker.voices import UploadLimits, VoiceLibrary, decode_upload

pytestmark = pytest.mark.allow_blocking  # plain filesystem calls, no event loop


def encoded(samples, rate: int, audio_format: str) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format=audio_format, subtype="PCM_16")
    return buffer.getvalue()


LIMITS = UploadLimits(max_bytes=5 << 20, max_seconds=30.0)
SQUARE = 0.25 * np.sign(np.sin(np.arange(96_000, dtype=np.float32) * np.pi / 48_000 + 0.1))  # 0.5 s


def decoded_with_peak(data: bytes) -> tuple[tuple[np.ndarray, int], int]:
    """decode_upload's result and the most memory Python held while it ran (tracemalloc's peak)."""
    tracemalloc.start()
    try:
        decoded = decode_upload(data, LIMITS)
        return decoded, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_small_many_channel_upload_is_decoded_without_holding_every_channel():
    """A 1.9 MB FLAC (8 channels at 192 kHz, 29 s of a square wave) decoded to 178 MB of float32 at
    once, 0.6 GB at 655 kHz: a few concurrent uploads took gigabytes. Only the mono samples are held."""
    frames = int(29 * 192_000)
    square = 0.25 * np.sign(np.sin(np.arange(frames, dtype=np.float32) / 4000))  # compresses to nothing
    channels = np.tile(square[:, None], (1, 8))
    data = encoded(channels, 192_000, "FLAC")
    del channels
    assert len(data) < LIMITS.max_bytes
    (samples, rate), peak = decoded_with_peak(data)
    mono_bytes = frames * 4
    assert peak < 3 * mono_bytes, f"{peak / 1e6:.0f} MB held to decode {mono_bytes / 1e6:.0f} MB"
    assert rate == 48_000 and samples.size == frames // 4


def test_a_voice_recorded_above_48_khz_is_stored_at_48_khz(tmp_path):
    """Stored at its own rate, 30 s at 192 kHz was an 11 MB wav, more than the 5 MiB upload limit, for
    each of --max-voices (1000) voices; the engines speak at 24 kHz."""
    library = VoiceLibrary(tmp_path / "voices")
    voice = library.add("studio", encoded(np.tile(SQUARE, 60), 192_000, "FLAC"), "안녕하세요", LIMITS)
    assert soundfile.info(voice.wav_path).samplerate == 48_000
    assert os.path.getsize(voice.wav_path) < 48_000 * 2 * 30 + 1000


def test_a_many_channel_upload_is_decoded_a_bounded_block_at_a_time():
    """Blocks of 65 536 frames were 17 MB each for 64 channels (67 MB for 255, Ogg's most): 43 MB
    held for this 5 MB file, 3.5 MB now."""
    frames = 80_000  # 64 channels of 8-bit: 5 MB
    channels = np.tile(SQUARE[:frames, None], (1, 64))
    buffer = io.BytesIO()
    soundfile.write(buffer, channels, 8000, format="WAV", subtype="PCM_U8")
    data = buffer.getvalue()
    (samples, _rate), peak = decoded_with_peak(data)
    assert samples.size == frames and peak < 6e6, f"{peak / 1e6:.1f} MB held"


@pytest.mark.parametrize(("rate", "audio_format"), [(1, "WAV"), (4000, "WAV"), (655_350, "FLAC")])
def test_a_sample_rate_no_voice_is_recorded_at_is_refused(rate, audio_format):
    """1 Hz made a 10-sample file a stored '10 s voice' (resampled to 240 000 samples of nothing);
    655 kHz is the memory case above."""
    samples = 0.25 * np.sin(np.arange(max(rate, 10), dtype=np.float32))
    with pytest.raises(InvalidAudio, match=f"sample rate is {rate} Hz; a voice needs 8000-192000 Hz"):
        decode_upload(encoded(samples, rate, audio_format), LIMITS)


@pytest.mark.parametrize("rate", [16_000, 96_000, 192_000])
def test_a_constant_level_is_silent_however_loud(rate):
    """Float samples of 1e30 were clipped to a full-scale constant and stored as a voice. Above 48 kHz
    the level is judged as read, not after resampling, whose edges ring."""
    with pytest.raises(InvalidAudio, match="the audio is silent"):
        decode_upload(encoded(np.full(rate, 0.9, dtype=np.float32), rate, "WAV"), LIMITS)


def test_a_voice_above_48_khz_is_resampled_as_it_is_read_never_held_at_its_own_rate():
    """29 s of stereo at 192 kHz held 25 MB (the mono samples at 192 kHz, then resampled) to keep
    5.6 MB at 48 kHz (9.4 MB now); resampled block by block, the samples are those of resampling
    the whole."""
    frames = int(29 * 192_000)
    tone = (0.3 * np.sin(np.arange(frames) * (2 * np.pi * 220 / 192_000))).astype(np.float32)
    data = encoded(np.tile(tone[:, None], (1, 2)), 192_000, "FLAC")
    (samples, rate), peak = decoded_with_peak(data)
    whole = resample(soundfile.read(io.BytesIO(data), dtype="float32")[0].mean(axis=1), 192_000, 48_000)
    assert rate == 48_000 and np.array_equal(samples, whole)
    assert peak < 2 * samples.nbytes, f"{peak / 1e6:.1f} MB held to keep {samples.nbytes / 1e6:.1f} MB"


def flac_of_no_stated_length() -> bytes:
    """A FLAC whose STREAMINFO gives 0 total samples ("unknown"), as an encoder writing to a pipe leaves it."""
    buffer = io.BytesIO()
    soundfile.write(buffer, 0.3 * np.sin(np.arange(32_000) / 3.0), 16_000, format="FLAC")
    data = bytearray(buffer.getvalue())
    assert data[:4] == b"fLaC" and data[4] & 0x7F == 0  # STREAMINFO first, from byte 8
    data[21] &= 0xF0  # the 36-bit total-samples field: the low 4 bits of byte 21, then 22-25
    data[22:26] = bytes(4)
    return bytes(data)


def test_an_upload_that_does_not_say_its_length_is_refused_as_such_not_as_aeons_long():
    """libsndfile gives 2^63 - 1 frames for it: refused as "576460752303423.5 s long"."""
    limits = UploadLimits(max_bytes=1 << 20, max_seconds=30.0)
    with pytest.raises(InvalidAudio, match="does not say how long it is") as refused:
        decode_upload(flac_of_no_stated_length(), limits)
    assert " s long" not in str(refused.value)
    with pytest.raises(ValueError, match="does not say how long it is"):
        read_wav(flac_of_no_stated_length(), max_seconds=30.0)


@pytest.mark.parametrize("rate", [0, 0xFFFFFFFF])
def test_a_header_with_a_sample_rate_of_0_is_refused_as_the_files_fault(rate):
    """libsndfile's words were "Internal error : SF_INFO struct incomplete.": the caller's header read
    as the worker's bug."""
    pcm = (0.3 * 32767 * np.sin(np.arange(16_000) / 5.0)).astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, rate, (rate * 2) & 0xFFFFFFFF, 2, 16)
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm
    with pytest.raises(InvalidAudio, match="no usable sample rate") as refused:
        decode_upload(b"RIFF" + struct.pack("<I", len(body)) + body, LIMITS)
    assert "Internal error" not in str(refused.value)
