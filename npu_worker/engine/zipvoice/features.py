"""Signal maths of ZipVoice in numpy: Vocos mel features, ISTFT, RMS normalisation, silence handling.

The numbers follow the reference implementation (torchaudio `MelSpectrogram(power=1, center=True)` with
HTK mel bands and no norm, `log(clamp(mel, 1e-7))`, lhotse's frame count) so that prompt features of this
worker and of the PyTorch pipeline agree; the tests pin them on known signals.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SILENCE_DB = -50.0  # threshold of the official pipeline (pydub dBFS of 10 ms chunks)
SILENCE_CHUNK_S = 0.01


@dataclass(frozen=True)
class SpectrumConfig:
    """STFT/mel geometry; defaults are the 24 kHz Vocos layout, overridden by model metadata."""

    sample_rate: int = 24000
    n_fft: int = 1024
    hop_length: int = 256
    win_length: int = 1024
    num_mels: int = 100


def hann_window(length: int) -> np.ndarray:
    """Periodic Hann window (torch.hann_window default), the window of both STFT and ISTFT."""
    n = np.arange(length, dtype=np.float64)
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * n / length)


@lru_cache(maxsize=8)
def mel_filterbank(sample_rate: int, n_fft: int, num_mels: int) -> np.ndarray:
    """HTK mel filters from 0 Hz to Nyquist, no area norm: shape (n_fft // 2 + 1, num_mels)."""
    all_freqs = np.linspace(0.0, sample_rate // 2, n_fft // 2 + 1)
    m_max = 2595.0 * np.log10(1.0 + (sample_rate / 2.0) / 700.0)
    m_pts = np.linspace(0.0, m_max, num_mels + 2)
    f_pts = 700.0 * (10.0 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0.0, np.minimum(down, up))


def stft(samples: np.ndarray, config: SpectrumConfig = SpectrumConfig()) -> np.ndarray:
    """Complex STFT, center=True with reflect padding: (n_fft // 2 + 1, 1 + n // hop) frames."""
    samples = np.asarray(samples, dtype=np.float64)
    pad = config.n_fft // 2
    padded = np.pad(samples, (pad, pad), mode="reflect" if samples.size > 1 else "constant")
    count = 1 + samples.size // config.hop_length
    index = np.arange(config.n_fft)[None, :] + config.hop_length * np.arange(count)[:, None]
    window = _padded_window(config)
    return np.fft.rfft(padded[index] * window, axis=1).T


def istft(spectrum: np.ndarray, config: SpectrumConfig = SpectrumConfig()) -> np.ndarray:
    """Inverse of `stft` (torch.istft, center=True, not normalised): (F - 1) * hop samples.

    Overlap-add of windowed frames divided by the summed squared window, then the n_fft // 2 samples
    of centre padding cut from each side.
    """
    frames = np.fft.irfft(spectrum, n=config.n_fft, axis=0).T  # (F, n_fft)
    window = _padded_window(config)
    count, hop = frames.shape[0], config.hop_length
    total = config.n_fft + hop * (count - 1)
    signal = np.zeros(total)
    envelope = np.zeros(total)
    squared = window * window
    for k in range(count):
        start = k * hop
        signal[start : start + config.n_fft] += frames[k] * window
        envelope[start : start + config.n_fft] += squared
    pad = config.n_fft // 2
    signal, envelope = signal[pad : total - pad], envelope[pad : total - pad]
    return (signal / np.where(envelope > 1e-11, envelope, 1.0)).astype(np.float32)


def _padded_window(config: SpectrumConfig) -> np.ndarray:
    window = hann_window(config.win_length)
    left = (config.n_fft - config.win_length) // 2
    return np.pad(window, (left, config.n_fft - config.win_length - left))


def frame_count(num_samples: int, hop_length: int = 256) -> int:
    """Frames kept for a signal: lhotse's `compute_num_frames`, i.e. (n + hop // 2) // hop."""
    return (num_samples + hop_length // 2) // hop_length


def log_mel(samples: np.ndarray, config: SpectrumConfig = SpectrumConfig()) -> np.ndarray:
    """Natural-log mel features of a signal, (frames, num_mels), before any feat_scale."""
    magnitude = np.abs(stft(samples, config))
    mel = mel_filterbank(config.sample_rate, config.n_fft, config.num_mels).T @ magnitude
    features = np.log(np.maximum(mel, 1e-7)).T
    return features[: frame_count(np.asarray(samples).size, config.hop_length)].astype(np.float32)


def rms(samples: np.ndarray) -> float:
    samples = np.asarray(samples, dtype=np.float64)
    return float(np.sqrt(np.mean(samples * samples))) if samples.size else 0.0


def rms_normalise(samples: np.ndarray, target_rms: float = 0.1) -> tuple[np.ndarray, float]:
    """Scale a quiet prompt up to `target_rms`; returns the samples and the original RMS.

    Loud prompts are left alone. `rms_restore` undoes the scaling on generated audio, so a quiet
    reference voice gives equally quiet output.
    """
    level = rms(samples)
    if 0.0 < level < target_rms:
        return (np.asarray(samples) * (target_rms / level)).astype(np.float32), level
    return np.asarray(samples, dtype=np.float32), level


def rms_restore(samples: np.ndarray, prompt_rms: float, target_rms: float = 0.1) -> np.ndarray:
    """Inverse of `rms_normalise` applied to generated audio."""
    if 0.0 < prompt_rms < target_rms:
        return (np.asarray(samples) * (prompt_rms / target_rms)).astype(np.float32)
    return np.asarray(samples, dtype=np.float32)


def chunk_levels_db(
    samples: np.ndarray, sample_rate: int, chunk_s: float = SILENCE_CHUNK_S, centred: bool = False
) -> np.ndarray:
    """dBFS of consecutive non-overlapping chunks (pydub's measure, without DC removal; `centred`: each
    chunk's own mean removed first, so a recording's DC offset does not count as sound)."""
    size = max(1, int(round(sample_rate * chunk_s)))
    count = np.asarray(samples).size // size
    if count == 0:
        return np.zeros(0)
    chunks = np.asarray(samples[: count * size], dtype=np.float64).reshape(count, size)
    if centred:
        chunks = chunks - chunks.mean(axis=1, keepdims=True)
    level = np.sqrt(np.mean(chunks * chunks, axis=1))
    return 20.0 * np.log10(np.maximum(level, 1e-10))


def trim_edge_silence(
    samples: np.ndarray,
    sample_rate: int,
    threshold_db: float = SILENCE_DB,
    leading: bool = True,
    trailing: bool = True,
    centred: bool = False,
) -> np.ndarray:
    """Cut 10 ms chunks below the threshold from either end (the official `remove_silence_edges`;
    `centred`: see `chunk_levels_db`)."""
    size = max(1, int(round(sample_rate * SILENCE_CHUNK_S)))
    loud = np.flatnonzero(chunk_levels_db(samples, sample_rate, centred=centred) > threshold_db)
    if loud.size == 0:
        return np.asarray(samples[:0], dtype=np.float32)
    start = int(loud[0]) * size if leading else 0
    end = (int(loud[-1]) + 1) * size if trailing else np.asarray(samples).size
    return np.asarray(samples[start:end], dtype=np.float32)


def shorten_pauses(
    samples: np.ndarray,
    sample_rate: int,
    max_pause_s: float,
    threshold_db: float = SILENCE_DB,
    centred: bool = False,
) -> np.ndarray:
    """Shorten every internal run of silent 10 ms chunks longer than `max_pause_s` to that length.

    The prompt's frames are paid for at every decoder step of every segment, so long pauses in a
    reference recording cost time and add nothing to the voice.
    """
    size = max(1, int(round(sample_rate * SILENCE_CHUNK_S)))
    quiet = chunk_levels_db(samples, sample_rate, centred=centred) <= threshold_db
    keep_chunks = max(1, int(round(max_pause_s / SILENCE_CHUNK_S)))
    pieces: list[np.ndarray] = []
    position, run_start = 0, None
    for index, is_quiet in enumerate(np.append(quiet, False)):
        if is_quiet and run_start is None:
            run_start = index
        elif not is_quiet and run_start is not None:
            if index - run_start > keep_chunks:
                half = keep_chunks // 2
                pieces.append(samples[position : (run_start + half) * size])
                position = (index - (keep_chunks - half)) * size
            run_start = None
    pieces.append(samples[position:])
    return np.concatenate(pieces).astype(np.float32)


def pause_spans(
    samples: np.ndarray,
    sample_rate: int,
    min_pause_s: float,
    threshold_db: float = SILENCE_DB,
    centred: bool = False,
) -> list[tuple[int, int]]:
    """(start, end) sample ranges of internal pauses of at least `min_pause_s`, in order."""
    size = max(1, int(round(sample_rate * SILENCE_CHUNK_S)))
    quiet = chunk_levels_db(samples, sample_rate, centred=centred) <= threshold_db
    need = max(1, int(round(min_pause_s / SILENCE_CHUNK_S)))
    spans: list[tuple[int, int]] = []
    run_start = None
    for index, is_quiet in enumerate(np.append(quiet, False)):
        if is_quiet and run_start is None:
            run_start = index
        elif not is_quiet and run_start is not None:
            if index - run_start >= need and run_start > 0 and index < quiet.size:
                spans.append((run_start * size, index * size))
            run_start = None
    return spans
