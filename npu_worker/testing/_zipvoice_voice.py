"""Sounds for the synthetic ZipVoice model: a tiny formant synthesiser and the matching log-mel.

The synthetic model has no trained weights, yet tests need audio that behaves like speech (sound after a
short silence, pauses at punctuation, a level close to the reference voice). So the reference wav and the
text encoder's per-token output are made by the same source-filter synthesiser here: a glottal pulse train
through a few formant resonances. The token table is the log-mel (ZipVoice features, feat_scale 0.1) of
each token's sound, so what the decoder is steered towards is what the reference voice sounds like.
"""

from __future__ import annotations

import hashlib

import numpy as np

from npu_worker.engine.zipvoice import features

SAMPLE_RATE = 24000
N_FFT = 1024
HOP = 256
NUM_MELS = 100
FEAT_SCALE = 0.1

VOWELS = "aeiouɐɛəɪɯʌɔøæɑʊɨyɤ"
"""Tokens that sound as vowels (loud, steady formants); other letters sound as quieter consonants."""


def _token_seed(token: str) -> int:
    return int.from_bytes(hashlib.sha256(token.encode()).digest()[:4], "little")


def formants_for(token: str) -> tuple[float, float, float]:
    """Three formant frequencies (Hz) for a token, fixed by the token's text so builds are reproducible."""
    rng = np.random.default_rng(_token_seed(token))
    return (float(rng.uniform(300, 900)), float(rng.uniform(900, 2400)), float(rng.uniform(2400, 3400)))


def _resonate(signal: np.ndarray, freq: float, bandwidth: float) -> np.ndarray:
    """Two-pole resonator (a formant), applied in the frequency domain to avoid a python-level loop."""
    r = np.exp(-np.pi * bandwidth / SAMPLE_RATE)
    theta = 2 * np.pi * freq / SAMPLE_RATE
    n = len(signal)
    spectrum = np.fft.rfft(signal, 2 * n)
    z = np.exp(-1j * np.linspace(0, np.pi, len(spectrum)))
    response = (1 - r) / np.abs(1 - 2 * r * np.cos(theta) * z + r * r * z * z)
    return np.fft.irfft(spectrum * response, 2 * n)[:n]


def voiced_sound(
    duration: float, f0: float | np.ndarray, formants: tuple[float, ...], rng: np.random.Generator
) -> np.ndarray:
    """A vowel-like sound: pulse train at `f0` (Hz, scalar or per-sample contour) through formant filters."""
    n = np.asarray(f0).size if np.ndim(f0) else int(round(duration * SAMPLE_RATE))
    contour = np.broadcast_to(np.asarray(f0, dtype=np.float64), (n,))
    phase = np.cumsum(contour / SAMPLE_RATE)
    source = np.diff(np.floor(phase), prepend=0.0) + 0.02 * rng.standard_normal(n)
    out = sum(_resonate(source, f, 80 + 0.06 * f) for f in formants)
    return np.asarray(out, dtype=np.float64)


def noise_sound(duration: float, rng: np.random.Generator) -> np.ndarray:
    """A fricative-like burst: high-passed noise."""
    noise = rng.standard_normal(int(duration * SAMPLE_RATE))
    return _resonate(noise, 4500.0, 2500.0)


def mel_filterbank() -> np.ndarray:
    """The engine's filterbank (513, 100): what the synthetic vocoder inverts must be what features use."""
    return features.mel_filterbank(SAMPLE_RATE, N_FFT, NUM_MELS)


def log_mel(samples: np.ndarray) -> np.ndarray:
    """ZipVoice features of a 24 kHz signal, (frames, 100): the engine's log-mel times feat_scale 0.1."""
    return features.log_mel(samples) * np.float32(FEAT_SCALE)


def token_feature_table(tokens: list[str], level: float = 0.1) -> np.ndarray:
    """Per-token mean log-mel (V, 100) of the token's synthesised sound at RMS `level`.

    Vowels are voiced and loud, other letters quieter with noise, everything else (pad, space,
    punctuation, stress marks) near silence, so pauses fall where a speaker would pause.
    """
    rng = np.random.default_rng(1234)
    silence = log_mel(1e-4 * rng.standard_normal(4096)).mean(axis=0)
    table = np.empty((len(tokens), NUM_MELS), dtype=np.float32)
    for index, token in enumerate(tokens):
        if token in VOWELS or (token.isalpha() and token.isascii() and token.lower() in "aeiouy"):
            sound = voiced_sound(0.2, 150.0, formants_for(token), rng)
            gain = level
        elif token.isalpha():
            sound = 0.5 * voiced_sound(0.2, 150.0, formants_for(token), rng) + noise_sound(0.2, rng)
            gain = level * 0.35
        else:
            table[index] = silence
            continue
        sound *= gain / (np.sqrt(np.mean(sound**2)) + 1e-12)
        table[index] = log_mel(sound)[4:-4].mean(axis=0)
    return table


def reference_speech(
    duration: float = 3.8, lead: float = 0.25, tail: float = 0.3, seed: int = 7
) -> np.ndarray:
    """A speech-like 24 kHz signal: syllables with a falling pitch contour, short pauses, edge silences.

    RMS of the voiced part is ~0.08 (below ZipVoice's 0.1 target, so the engine's RMS scaling runs).
    """
    rng = np.random.default_rng(seed)
    total = int(duration * SAMPLE_RATE)
    out = np.zeros(total)
    position = int(lead * SAMPLE_RATE)
    end = total - int(tail * SAMPLE_RATE)
    syllable = 0
    while position < end - int(0.12 * SAMPLE_RATE):
        length = min(int(rng.uniform(0.14, 0.24) * SAMPLE_RATE), end - position)
        f0 = np.linspace(170, 140, length) * (1 + 0.05 * np.sin(syllable))
        vowel = VOWELS[int(rng.integers(len(VOWELS)))]
        sound = voiced_sound(length / SAMPLE_RATE, f0, formants_for(vowel), rng)
        if syllable % 2 == 0:
            onset = min(len(sound), int(0.03 * SAMPLE_RATE))
            sound[:onset] += 0.3 * noise_sound(onset / SAMPLE_RATE, rng)
        envelope = np.sin(np.linspace(0, np.pi, length)) ** 0.6
        sound = sound * envelope / (np.sqrt(np.mean(sound**2)) + 1e-12)
        out[position : position + length] = 0.08 * sound
        position += length + (int(0.15 * SAMPLE_RATE) if syllable % 5 == 4 else int(0.02 * SAMPLE_RATE))
        syllable += 1
    out += 3e-4 * rng.standard_normal(total)
    return np.clip(out, -1.0, 1.0).astype(np.float32)


VOCODER_GAIN = 1.28
"""Log-magnitude offset of the synthetic vocoder, calibrated so features → vocoder → ISTFT keeps the level."""


def mel_to_linear() -> tuple[np.ndarray, np.ndarray]:
    """(100, 513) interpolation from mel bands to linear bins, and the per-bin log offset.

    A band's mel value is roughly the mean bin magnitude times the band's weight sum, so the offset
    removes log(weight sum) (interpolated) before the vocoder's harmonic comb is applied.
    """
    bank = mel_filterbank()
    bins = np.arange(N_FFT // 2 + 1)
    centres = bank.argmax(axis=0).astype(np.float64)
    interp = np.zeros((NUM_MELS, len(bins)))
    for k in bins:
        upper = int(np.clip(np.searchsorted(centres, k), 1, NUM_MELS - 1))
        lower = upper - 1
        span = max(centres[upper] - centres[lower], 1.0)
        w = float(np.clip((k - centres[lower]) / span, 0.0, 1.0))
        interp[lower, k] += 1 - w
        interp[upper, k] += w
    widths = np.maximum(bank.sum(axis=0), 1e-3)
    log_offset = -(np.log(widths) @ interp) + VOCODER_GAIN
    return interp.astype(np.float32), log_offset.astype(np.float32)
