"""Helpers for the test_openai_* modules (no tests here): SDK clients on a live worker, decoding."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import soundfile
from aiohttp.test_utils import TestClient
from openai import AsyncOpenAI, OpenAI

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import from_pcm16
from npu_worker.engine.base import SynthesisRequest
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

RATE = 24000
TEXT = "안녕하세요, 반갑습니다."


def base_url(client: TestClient) -> str:
    return str(client.make_url("/v1"))


# The async SDK clients the running test opened; the `openai_sdks_closed` fixture (tests/conftest.py)
# closes them on the test's own loop. Left to the GC, each closed itself on whichever loop ran then, a
# later test's: "Task exception was never retrieved … Event loop is closed" landed in that test (a CI run
# lost test_ws_send_left.py to it).
_opened: list[AsyncOpenAI] | None = None


def kept(sdk: AsyncOpenAI) -> AsyncOpenAI:
    """`sdk`, closed at the end of the test (a module that opens one marks the fixture)."""
    if _opened is None:
        raise RuntimeError("mark the module with pytest.mark.usefixtures('openai_sdks_closed')")
    _opened.append(sdk)
    return sdk


async def sdks_closed_after() -> AsyncIterator[None]:
    """Yield while the test runs, then close every async SDK client it opened."""
    global _opened
    _opened = []
    try:
        yield
    finally:
        opened, _opened = _opened, None
        for sdk in opened:
            await sdk.close()


def async_sdk(client: TestClient) -> AsyncOpenAI:
    return kept(AsyncOpenAI(base_url=base_url(client), api_key="unused", timeout=seconds(30), max_retries=0))


def sync_sdk(client: TestClient) -> OpenAI:
    return OpenAI(base_url=base_url(client), api_key="unused", timeout=seconds(30), max_retries=0)


def expected_samples(text: str, speed: float = 1.0, seconds_per_char: float = 0.02) -> int:
    """What the tone engine makes for `text` (no leading silence, so trimming removes nothing)."""
    engine = ToneEngine(seconds_per_char=seconds_per_char)
    return engine.render(SynthesisRequest(text=text, speed_factor=speed)).size


def decode(data: bytes, fmt: str) -> tuple[np.ndarray, int]:
    """Audio bytes of any response format back to samples and sample rate."""
    if fmt == "pcm":
        return from_pcm16(data), RATE
    samples, rate = soundfile.read(io.BytesIO(data), dtype="float32")
    return samples, rate


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def tone_wav(path_or_none: Path | None = None, seconds_long: float = 2.0, rate: int = 16000) -> bytes:
    """A real audio file (a quiet sine) to upload as a voice."""
    t = np.arange(int(seconds_long * rate)) / rate
    buffer = io.BytesIO()
    soundfile.write(buffer, (0.2 * np.sin(2 * np.pi * 200 * t)).astype(np.float32), rate, format="WAV")
    data = buffer.getvalue()
    if path_or_none is not None:
        path_or_none.write_bytes(data)
    return data


async def hang_up_after_two_chunks(client, gate: ChunkGate, path: str, body: dict) -> None:
    """POST `body` to `path`, give up (the connection closes) once the engine has made two chunks, then
    let the engine go and wait until the worker runs nothing."""
    scheduler = client.app[SCHEDULER_KEY]
    gate.allow(2)
    try:
        request = asyncio.ensure_future(client.post(path, json=body))
        await until(lambda: gate.passed >= 2)
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
        gate.open()
        await until(lambda: scheduler.jobs_running() == 0)
    finally:
        gate.open()
