"""What one `POST /v1/audio/speech` costs the event loop: its job's events, which the answer does not
read (it reads the audio and the `done`), share the loop's wake-ups (as a `/synth`'s do:
tests/test_synth_path.py)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.model import AudioChunk, LogEntry
from tests.timing import seconds
from tests.tone_engine import ToneEngine


@pytest.mark.parametrize("response_format", ["flac", "pcm"])
async def test_a_speech_answers_unread_events_reach_the_loop_with_its_audio_or_its_done(
    worker, response_format
):
    """Its `start` (before the engine's first chunk), `synth` and `ok` each woke the loop on their own,
    to be read by nobody: a whole flac file waits only for the audio and the `done`, a stream too."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()  # the section is held at its first chunk
    client = await worker(engine)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    drains: list[list[str]] = []  # per drain: what it handed over (an event's name, or "audio")
    drain = handoff._drain

    def counted() -> None:
        with handoff._lock:
            pending = [arg for _, arg in handoff._pending]
        names = [type(a.event).__name__ for a in pending if isinstance(a, LogEntry)]
        drains.append(names + ["audio" for a in pending if isinstance(a, AudioChunk)])
        drain()

    handoff._drain = counted
    body = {"model": "tts-1", "input": "가" * 10, "voice": "default", "response_format": response_format}
    answer = asyncio.ensure_future(client.post("/v1/audio/speech", json=body))
    try:
        async with asyncio.timeout(seconds(10)):
            while not engine.calls:  # the job has started: its `start` is handed over
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # (a drain it asked for runs meanwhile)
        engine.gate.set()
        async with asyncio.timeout(seconds(10)):
            response = await answer
            assert response.status == 200 and await response.read()
    finally:
        engine.gate.set()
        answer.cancel()
    events = [name for names in drains for name in names if name != "audio"]
    assert events == ["Start", "Progress", "Progress", "Done"]
    alone = [names for names in drains if names and not {"audio", "Done"} & set(names)]
    assert alone == []
