"""The default `mp3` streams: its first bytes come while the engine still speaks (it came whole at the
end, so a long text's first byte waited for its last sentence), and what streams is read whole by
libsndfile and by ffmpeg (a VBR stream read back short: its length frame is written at the close)."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import tracemalloc

import numpy as np
import pytest

from npu_worker.openai_compat.formats import FORMATS, StreamEncoder, available_formats
from tests.openai_support import RATE, async_sdk, decode, expected_samples
from tests.test_ws_support import ChunkGate
from tests.timing import seconds
from tests.tone_engine import ToneEngine

# A streamed mp3 carries what a whole file trims by its length frame: the encoder's delay and padding
# and that frame itself (576 samples a frame at 24 kHz): a few frames more than was spoken, never less.
MP3_FRAME = 576
EXTRA_FRAMES = 6

pytestmark = [
    pytest.mark.skipif("mp3" not in available_formats(), reason="this libsndfile has no mp3"),
    pytest.mark.usefixtures("openai_sdks_closed"),
]


def ffmpeg_samples(data: bytes) -> int:
    """How many samples ffmpeg decodes from `data` (a second decoder, besides libsndfile's mpg123)."""
    done = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", str(RATE), "pipe:1"],
        input=data,
        capture_output=True,
        check=True,
        timeout=seconds(30),
    )
    return len(done.stdout) // 2


async def test_the_default_mp3_sends_its_first_bytes_before_the_engine_has_finished(worker):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    sdk = async_sdk(client)
    text = "나" * 100  # 2 s of audio: 40 chunks, of which the engine may make 10 until the gate opens
    gate.allow(10)
    pieces = []
    try:
        async with asyncio.timeout(seconds(20)):  # (it answered nothing until the gate opened: never)
            async with sdk.audio.speech.with_streaming_response.create(
                model="tts-1", input=text, voice="default"
            ) as response:
                assert response.headers["content-type"] == "audio/mpeg"
                assert "content-length" not in response.headers
                chunks = response.iter_bytes()
                pieces.append(await anext(chunks))
                assert gate.passed <= 10  # the engine has not finished: the bytes came as made
                gate.open()
                pieces.extend([piece async for piece in chunks])
    finally:
        gate.open()
    data = b"".join(pieces)
    samples, rate = decode(data, "mp3")
    spoken = expected_samples(text)
    assert rate == RATE
    assert spoken <= samples.size <= spoken + EXTRA_FRAMES * MP3_FRAME
    assert float(np.max(np.abs(samples))) > 0.1
    if shutil.which("ffmpeg") is not None:
        assert spoken <= ffmpeg_samples(data) <= spoken + EXTRA_FRAMES * MP3_FRAME


async def test_an_sse_mp3_sends_deltas_as_made_that_join_into_one_readable_file(worker):
    client = await worker(ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01))
    text = "가" * 100
    body = {"input": text, "response_format": "mp3", "stream_format": "sse"}
    async with client.post("/v1/audio/speech", json=body) as response:
        raw = (await response.read()).decode()
    events = [json.loads(block[len("data: ") :]) for block in raw.split("\n\n") if block.strip()]
    deltas = [base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta"]
    assert len(deltas) > 1  # (one delta, the whole file at the end, before)
    samples, _ = decode(b"".join(deltas), "mp3")
    spoken = expected_samples(text)
    assert spoken <= samples.size <= spoken + EXTRA_FRAMES * MP3_FRAME


@pytest.mark.parametrize("name", ["mp3", "opus"])
def test_a_streamed_encoding_keeps_none_of_the_bytes_it_has_handed_out(name, tmp_path):
    """Two minutes of a stream at 24 kHz: the encoder kept every byte it had sent until its end (1.2 MB
    of mp3, 0.6 MB of opus, at each connection); it keeps what has not gone out yet, a frame or so."""
    if name not in available_formats(RATE):
        pytest.skip(f"this libsndfile has no {name} at {RATE} Hz")
    chunk = (0.3 * np.sin(np.arange(RATE // 2) * 2 * np.pi * 440 / RATE)).astype(np.float32)
    encoder = StreamEncoder(FORMATS[name], RATE)
    sent = tmp_path / f"sent.{name}"  # (what goes out, kept out of the memory counted)
    with sent.open("wb") as out:
        out.write(encoder.feed(chunk))  # (the encoder's first buffers, before the count starts)
        tracemalloc.start()
        try:
            before, _ = tracemalloc.get_traced_memory()
            handed_out = sum(out.write(encoder.feed(chunk)) for _ in range(240))
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        out.write(encoder.feed(chunk) + encoder.finish())
    assert handed_out > 400_000  # (what it held before: all of it)
    assert kept < 64 * 1024, (kept, handed_out)
    samples, rate = decode(sent.read_bytes(), name)  # (what went out is still one whole, readable file)
    assert rate == RATE and samples.size >= 242 * chunk.size
