"""The default mp3 stream's first frame: lame writes it blank (the length frame libsndfile fills at the
close, too late for a stream) and every decoder played it as 576 samples of silence (24 ms at 24 kHz)
before the audio, on top of the encoder's own delay (1 105 samples). It is no longer sent: the speech
starts 24 ms sooner for libsndfile's mpg123 and for ffmpeg alike, and the stream still reads whole."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from npu_worker.openai_compat.formats import FORMATS, StreamEncoder, available_formats
from tests.openai_support import RATE, async_sdk, decode
from tests.timing import seconds

pytestmark = [
    pytest.mark.skipif("mp3" not in available_formats(), reason="this libsndfile has no mp3"),
    pytest.mark.usefixtures("openai_sdks_closed"),  # (async_sdk's clients closed on the test's loop)
]

ENCODER_DELAY = 1105  # lame's 576 and the decoder's 529: what only the filled length frame could skip
MP3_FRAME = 576  # samples a frame at 24 kHz (MPEG-2 Layer III)


def onset(samples: np.ndarray) -> int:
    loud = np.flatnonzero(np.abs(samples) > 0.05)
    assert loud.size, "no audio decoded"
    return int(loud[0])


def ffmpeg_decoded(data: bytes) -> np.ndarray:
    done = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", str(RATE), "pipe:1"],
        input=data,
        capture_output=True,
        check=True,
        timeout=seconds(30),
    )
    return np.frombuffer(done.stdout, dtype="<i2").astype(np.float32) / 32768


async def test_the_streamed_mp3_starts_after_the_encoders_delay_alone(worker):
    client = await worker()
    sdk = async_sdk(client)
    text = "나" * 50  # 1 s of the tone engine's audio, which starts loud at its first sample
    pcm = await (
        await sdk.audio.speech.create(model="tts-1", input=text, voice="default", response_format="pcm")
    ).aread()
    mp3 = await (await sdk.audio.speech.create(model="tts-1", input=text, voice="default")).aread()
    spoken, _ = decode(pcm, "pcm")
    decoders = {"libsndfile": decode(mp3, "mp3")[0]}
    if shutil.which("ffmpeg"):
        decoders["ffmpeg"] = ffmpeg_decoded(mp3)
    for name, decoded in decoders.items():
        late = onset(decoded) - onset(spoken)
        # the delay and less than a frame more (was: a whole blank frame more, 1 681)
        assert ENCODER_DELAY - 64 <= late < ENCODER_DELAY + MP3_FRAME // 2, (name, late)
        assert decoded.size >= spoken.size + ENCODER_DELAY, (name, decoded.size)  # read whole


@pytest.mark.parametrize("piece", [1, 3, 240, 24000])
def test_the_blank_frame_is_left_out_however_the_samples_come(piece):
    """Fed a sample at a time, the frame's header and zeros come over several writes."""
    tone = (0.3 * np.sin(np.arange(RATE // 2) * 2 * np.pi * 300 / RATE)).astype(np.float32)
    encoder = StreamEncoder(FORMATS["mp3"], RATE)
    sent = b"".join(encoder.feed(tone[i : i + piece]) for i in range(0, len(tone), piece)) + encoder.finish()
    assert sent[:2] == b"\xff\xf3" and any(sent[4:40])  # a frame of audio first, not a blank one
    decoded, _ = decode(sent, "mp3")
    assert onset(decoded) < ENCODER_DELAY + MP3_FRAME // 2
    assert decoded.size >= tone.size + ENCODER_DELAY
