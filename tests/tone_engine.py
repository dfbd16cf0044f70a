"""A real Engine implementation for tests: sine tones, optionally slow on purpose.

It runs the whole engine contract (load, info, stream of float32 chunks, close) so the scheduler and
the views are exercised exactly as with espeak or ZipVoice; only the sound is simpler.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np

from npu_worker.engine.base import EngineInfo, SynthesisRequest
from npu_worker.protocol import EngineError


class ToneEngine:
    def __init__(
        self,
        sample_rate: int = 24000,
        seconds_per_char: float = 0.02,
        chunk_seconds: float = 0.1,
        delay_per_chunk: float = 0.0,
        leading_silence: float = 0.0,
        fail_on: str | None = None,
        load_delay: float = 0.0,
    ) -> None:
        self.sample_rate = sample_rate
        self.seconds_per_char = seconds_per_char
        self.chunk_seconds = chunk_seconds
        self.delay_per_chunk = delay_per_chunk
        self.leading_silence = leading_silence
        self.fail_on = fail_on
        self.load_delay = load_delay
        self.calls: list[str] = []
        self.requests: list[SynthesisRequest] = []  # what the scheduler asked for (voice, speed, lang)
        self.gate: threading.Event | None = None  # when set by a test, stream() waits on it per chunk
        self.load_gate: threading.Event | None = None  # when set by a test, load() waits on it
        self.load_phase: str | None = None  # what /health shows while loading

    @property
    def info(self) -> EngineInfo:
        return EngineInfo("tone", "cpu", "fp32", self.sample_rate, "tone-test-1")

    def load(self) -> None:
        self.load_phase = "tuning the tones"
        time.sleep(self.load_delay)
        if self.load_gate is not None:
            self.load_gate.wait()

    def render(self, request: SynthesisRequest) -> np.ndarray:
        """The full audio `stream()` yields for this request, in one piece."""
        n = int(len(request.text) * self.seconds_per_char * self.sample_rate / request.speed_factor)
        t = np.arange(n) / self.sample_rate
        freq = 220.0 + (sum(map(ord, request.text)) % 200)
        tone = (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)
        silence = np.zeros(int(self.leading_silence * self.sample_rate), dtype=np.float32)
        return np.concatenate([silence, tone])

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        self.calls.append(request.text)
        self.requests.append(request)
        if self.fail_on is not None and self.fail_on in request.text:
            raise EngineError(f"tone engine refuses text containing {self.fail_on!r}")
        audio = self.render(request)
        step = max(1, int(self.chunk_seconds * self.sample_rate))
        for start in range(0, audio.size, step):
            if self.gate is not None:
                self.gate.wait()
            if self.delay_per_chunk:
                time.sleep(self.delay_per_chunk)
            yield audio[start : start + step]

    def close(self) -> None:
        pass


class HeldLoad(ToneEngine):
    """A tone engine whose load lasts until `loaded` is set (a worker still loading, for as long as a
    test needs it to be)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = threading.Event()

    def load(self) -> None:
        self.loaded.wait(60)  # a test that forgets to set it still ends
