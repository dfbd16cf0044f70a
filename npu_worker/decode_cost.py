"""How many samples a sound may cost to decode, checked from its header before any is decoded.

A codec's bytes bound nothing: 19 KB of Ogg Vorbis, 64 channels at 48 kHz for 29 s, took 2.6 s of CPU
to decode (Ogg allows 255 channels). Voice uploads and a request's `ref_wav` share this bound.
"""

from __future__ import annotations

HIGHEST_RATE = 192_000  # the top of `audio_decode.SPEECH_RATES`
MAX_CHANNEL_RATE = 8 * HIGHEST_RATE  # samples decoded a second: FLAC's most (8 channels at 192 kHz)


def too_many_samples(channels: int, frames: int, max_seconds: float) -> str | None:
    """Why a sound of `channels` × `frames` is too costly to decode, or None: bounded at what 8 channels
    at 192 kHz for `max_seconds` decode to."""
    limit = int(MAX_CHANNEL_RATE * max_seconds)
    if channels * frames <= limit:
        return None
    return (
        f"the audio has {channels} channels of {frames} frames, {channels * frames} samples to decode; "
        f"the limit is {limit} (8 channels at {HIGHEST_RATE} Hz for {max_seconds:g} s): send mono"
    )
