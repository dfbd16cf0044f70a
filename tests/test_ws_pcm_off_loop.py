"""A `/ws` preview's audio reaches the event loop already as int16 PCM: the engine thread converts each
chunk (`Delivery`), so the loop, which serves every socket, only cuts and writes it."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import to_pcm16
from npu_worker.engine.base import SynthesisRequest
from npu_worker.jobs.model import AudioChunk
from npu_worker.ws_server import request_stream
from tests.test_ws_support import batch, connect, receive_until_done
from tests.tone_engine import ToneEngine


async def test_a_preview_s_chunks_come_converted_from_the_engine_thread(worker, monkeypatch):
    engine = ToneEngine(chunk_seconds=0.1)
    client = await worker(engine)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    handed: list[tuple[AudioChunk, bool]] = []  # (chunk, handed over from the loop's own thread)
    ordinary, waiting = handoff.__call__, handoff.later
    loop_thread = threading.get_ident()

    def seen(argument: Any) -> None:
        if isinstance(argument, AudioChunk):
            handed.append((argument, threading.get_ident() == loop_thread))

    def call(callback: Any, argument: Any) -> None:
        seen(argument)
        ordinary(callback, argument)

    def call_later(callback: Any, argument: Any, within: float) -> None:
        seen(argument)
        waiting(callback, argument, within)

    monkeypatch.setattr(type(handoff), "__call__", lambda self, callback, argument: call(callback, argument))
    monkeypatch.setattr(handoff, "later", call_later)
    on_the_loop: list[int] = []  # conversions by the `/ws` stream itself (it runs on the loop)

    def counted(samples: np.ndarray) -> np.ndarray:
        on_the_loop.append(int(np.asarray(samples).size))
        return to_pcm16(samples)

    monkeypatch.setattr(request_stream, "to_pcm16", counted)
    ws = await connect(client)
    text = "가" * 60  # 1.2 s in 0.1 s chunks: urgent ones and later ones
    try:
        await ws.send_json(batch(text))
        transcript = await receive_until_done(ws)
    finally:
        await ws.close()

    audio = [(chunk, from_loop) for chunk, from_loop in handed if chunk.samples.size]
    assert len(audio) >= 10 and not any(from_loop for _, from_loop in audio)  # the engine thread's
    for chunk, _ in audio:
        assert chunk.pcm16 is not None and chunk.pcm16.dtype == np.int16
        assert np.array_equal(chunk.pcm16, to_pcm16(chunk.samples))
    assert on_the_loop == []
    expected = to_pcm16(engine.render(SynthesisRequest(text))).astype("<i2").tobytes()
    assert transcript.section_pcm(0) == expected  # the stream is the same, byte for byte
