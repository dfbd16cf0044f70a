"""An uploaded voice's audio, checked by really decoding it: rate, length, finite samples, not silent.

Pure (no filesystem, no aiohttp): the bytes in, mono float32 samples and their rate out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .audio import from_pcm16, pcm16_wav, wav_bytes
from .audio_decode import SPEECH_RATES, MonoRead, declared_frames, open_sound, read_mono_at
from .decode_cost import too_many_samples
from .errors import counted
from .protocol import InvalidAudio

MIN_VOICE_SECONDS = 0.5
MIN_SAMPLE_RATE, MAX_SAMPLE_RATE = SPEECH_RATES  # (and a voice stored at 655 kHz would be stored that large)
MAX_STORED_RATE = 48_000  # above every engine's rate (24 kHz); 30 s stored are at most 2.9 MB
UPLOAD = "the upload"  # what a caller sent, as its refusal names it: a voice upload's file
INLINE_REF_AUDIO = "the inline ref_audio"  # an OpenAI speech request's (or batch default's) base64 audio


@dataclass(frozen=True)
class UploadLimits:
    max_bytes: int
    max_seconds: float


def decode_upload(data: bytes, limits: UploadLimits) -> tuple[np.ndarray, int]:
    """Mono float32 samples and rate of an uploaded file, checked by really decoding it."""
    samples, rate, _pcm = _decode(data, limits)
    return samples, rate


def upload_wav(data: bytes, limits: UploadLimits, sent: str = UPLOAD) -> bytes:
    """The 16-bit mono wav stored for an upload, checked as `decode_upload` checks it. A 16-bit mono
    upload kept at its rate is stored bit for bit: read through libsndfile's float (÷32768) and written
    ×32767, each sample lost up to 1 LSB (32767 → 32766, −32768 → −32767). `sent`: what the caller sent,
    as the refusal of audio that does not decode names it (an inline `ref_audio` was "the upload")."""
    samples, rate, pcm = _decode(data, limits, sent)
    return pcm16_wav(pcm, rate) if pcm is not None else wav_bytes(samples, rate)


def _decode(
    data: bytes, limits: UploadLimits, sent: str = UPLOAD
) -> tuple[np.ndarray, int, np.ndarray | None]:
    """`decode_upload`, and the upload's own int16 samples where they are what is stored."""
    pcm = None
    if len(data) > limits.max_bytes:
        raise InvalidAudio(f"the audio file has {len(data)} bytes, the limit is {limits.max_bytes}")
    try:
        with open_sound(data) as sound:
            rate = sound.samplerate
            if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
                raise InvalidAudio(
                    f"the sample rate is {rate} Hz; a voice needs {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz"
                )
            seconds = declared_frames(sound) / rate
            if seconds > limits.max_seconds:
                raise InvalidAudio(
                    f"the audio is {seconds:.1f} s long, the limit is {limits.max_seconds:g} s"
                )
            _check_decoded_samples(sound.channels, declared_frames(sound), limits)
            stored_rate = min(rate, MAX_STORED_RATE)  # 30 s at 192 kHz was an 11 MB wav, kept for ever
            if stored_rate == rate and sound.subtype == "PCM_16" and sound.channels == 1:
                pcm = sound.read(dtype="int16")
                samples = from_pcm16(pcm)
                read = MonoRead(samples, 0, float(np.ptp(samples)) if samples.size else 0.0)
            else:
                read = read_mono_at(sound, stored_rate)  # (resampled as read: never held at 192 kHz)
    except (RuntimeError, ValueError) as exc:
        raise InvalidAudio(f"{sent} is not a readable audio file ({exc})") from None
    mono = read.samples
    if read.bad:  # checked apart from silence: NaN made every check below say "silent"
        bad = counted(read.bad, "sample that is not a finite number", "samples that are not finite numbers")
        raise InvalidAudio(f"the audio holds {bad} (NaN or infinity)")
    if mono.size / stored_rate < MIN_VOICE_SECONDS:
        seconds = mono.size / stored_rate
        raise InvalidAudio(f"the audio is {seconds:.2f} s long; a voice needs {MIN_VOICE_SECONDS} s")
    if read.span < 2e-4:  # a constant level (1e30 clipped to full scale) is silent too
        raise InvalidAudio("the audio is silent")
    return mono, stored_rate, pcm


def _check_decoded_samples(channels: int, frames: int, limits: UploadLimits) -> None:
    """Refused before decoding: a few KB of a codec can be seconds of CPU (`too_many_samples`)."""
    if why := too_many_samples(channels, frames, limits.max_seconds):
        raise InvalidAudio(why)
