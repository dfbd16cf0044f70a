"""ZipVoice's reference read at the engine's rate as it is decoded: the samples it had, less memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import soundfile

from npu_worker.audio import resample
from npu_worker.audio_decode import read_wav
from npu_worker.engine.zipvoice.prompt import load_reference

ENGINE_RATE = 24_000


def reference(tmp_path, rate: int, seconds: float, channels: int, subtype: str):
    frames = int(rate * seconds)
    tone = 0.4 * np.sin(np.arange(frames) * (2 * np.pi * 220 / rate))
    noise = np.random.default_rng(3).uniform(-0.05, 0.05, (frames, channels))
    path = tmp_path / f"ref-{rate}-{channels}-{subtype}.wav"
    soundfile.write(path, tone[:, None] + noise, rate, subtype=subtype)
    return path


@pytest.mark.parametrize(
    ("rate", "channels", "subtype"),
    [(192_000, 1, "PCM_16"), (44_100, 2, "PCM_16"), (48_000, 1, "FLOAT"), (16_000, 1, "PCM_24")],
)
def test_the_reference_is_the_samples_a_whole_read_resampled_gave(tmp_path, rate, channels, subtype):
    path = reference(tmp_path, rate, 7.3, channels, subtype)
    whole, whole_rate = read_wav(path.read_bytes())
    assert np.array_equal(load_reference(str(path), ENGINE_RATE), resample(whole, whole_rate, ENGINE_RATE))


def test_a_reference_at_192_khz_is_never_held_whole_at_its_own_rate(tmp_path):
    """30 s of 16-bit mono at 192 kHz (11.5 MB) was read whole as int16 and as float32: a 69 MB peak to
    keep 2.9 MB at 24 kHz (18.7 MB now, the file's bytes included)."""
    path = reference(tmp_path, 192_000, 30.0, 1, "PCM_16")
    tracemalloc.start()
    try:
        samples = load_reference(str(path), ENGINE_RATE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    on_disk = path.stat().st_size  # the file's bytes are read whole: that much is needed
    assert samples.size == pytest.approx(30 * ENGINE_RATE, abs=ENGINE_RATE // 100)
    assert peak < on_disk + 3 * samples.nbytes, (
        f"{peak / 1e6:.1f} MB held to keep {samples.nbytes / 1e6:.1f} MB"
    )
