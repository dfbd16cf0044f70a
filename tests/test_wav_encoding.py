"""A section's wav, encoded from its chunks without the `wave` module: the same bytes, fewer buffers."""

from __future__ import annotations

import io
import tracemalloc
import wave

import numpy as np
import pytest

from npu_worker import audio
from npu_worker.jobs.delivery import SectionAudio


def wave_module_wav(samples: np.ndarray, rate: int) -> bytes:
    """What the worker wrote before: `to_pcm16` of the joined audio through the standard `wave`."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(audio.to_pcm16(samples).tobytes())
    return buffer.getvalue()


# Clipping (past full scale, exactly at it), rounding halves (x.5 LSB both ways), the smallest values.
EDGES = np.array(
    [1.5, -1.5, 1.0, -1.0, 0.99999, -0.99999, 0.5 / 32767, -0.5 / 32767, 1.5 / 32767, 2.5 / 32767, 1e-9, 0.0],
    dtype=np.float32,
)


@pytest.mark.parametrize("frames", [0, 1, 3, 7, 12, 1001, 24_001])
@pytest.mark.parametrize("rate", [8_000, 22_050, 24_000, 192_000])
def test_the_wav_is_byte_for_byte_what_the_wave_module_wrote(frames, rate):
    noise = np.random.default_rng(frames).standard_normal(frames).astype(np.float32) * 0.7
    samples = np.concatenate([EDGES, noise])[:frames] if frames else noise
    expected = wave_module_wav(samples, rate)
    assert audio.wav_bytes(samples, rate) == expected
    assert audio.wav_bytes(samples.astype(np.float64), rate) == wave_module_wav(
        samples.astype(np.float64), rate
    )
    pieces = np.array_split(samples, 5)  # empty pieces among them for the short ones
    assert audio.wav_of_chunks(pieces, rate) == expected
    assert audio.wav_of_chunks([], rate) == wave_module_wav(np.zeros(0, np.float32), rate)


@pytest.mark.parametrize("rate", [0, -24_000, 1 << 31])
def test_a_rate_no_wav_header_holds_is_a_value_error(rate):
    with pytest.raises(ValueError, match="sample rate"):
        audio.wav_bytes(np.zeros(10, np.float32), rate)


def test_a_sections_wav_holds_one_float_copy_at_most_and_keeps_none():
    """A 4.2 s section in the engine's chunks: encoding it for its file and the cache held the joined
    floats (kept on the section afterwards), a clipped copy, the int16, its `tobytes` and `wave`'s
    buffer: 10 bytes a sample at the peak, 6 kept. Now the joined floats, the int16 and the wav (8),
    and only the wav is kept."""
    chunks = [np.full(1440, 0.1, dtype=np.float32) for _ in range(70)]
    frames = 1440 * 70
    section = SectionAudio(chunks, None, 24_000, trimmed=False, key="k", hit=None)
    audio.wav_bytes(np.concatenate(chunks[:2]), 24_000)  # numpy's first-call allocations out of the count
    tracemalloc.start()
    try:
        wav = section.raw_wav
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert wav == wave_module_wav(np.concatenate(chunks), 24_000)
    assert peak <= 8.5 * frames, peak / frames
    assert kept <= 2.1 * frames, kept / frames  # the wav alone (the cache and the file share it)
