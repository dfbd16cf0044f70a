"""Voice uploads decoded at once are bounded (`--voice-decodes`): a small hostile file (GSM 6.10 at
192 kHz) costs a decode thread seconds of CPU, and N uploads at once took N threads beside the engine.
One finding no slot within `--voice-decode-wait` gets a 503 `DecodersBusy` with `Retry-After`, never a
hang; the slot is free again once the decode ends. Against a real `npu-worker serve --port 0`."""

from __future__ import annotations

import asyncio
import base64
import io
import os
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import numpy as np
import pytest
import soundfile

from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]
UPLOADS = 8
RATE = 192_000


def telephone_at_192_khz() -> bytes:
    """10 s of GSM 6.10 at 192 kHz: 390 KB, about 0.2 s of CPU to decode (what the bound is for)."""
    frames = RATE * 10
    noise = np.random.default_rng(7).uniform(-0.05, 0.05, frames)
    tone = 0.3 * np.sin(np.arange(frames) * (2 * np.pi * 220 / RATE)) + noise
    buffer = io.BytesIO()
    soundfile.write(buffer, tone.astype(np.float32), RATE, format="WAV", subtype="GSM610")
    return buffer.getvalue()


async def upload(session: aiohttp.ClientSession, base: str, name: str, audio: bytes) -> tuple[int, str, dict]:
    form = aiohttp.FormData()
    form.add_field("name", name)
    form.add_field("ref_text", "a test voice")
    form.add_field("audio_sample", audio, filename="v.wav", content_type="audio/wav")
    async with session.post(f"{base}/v1/audio/voices", data=form) as answer:
        return answer.status, answer.headers.get("Retry-After", ""), await answer.json()


async def uploads_at_once(base: str, audio: bytes, first: int) -> list[tuple[int, str, dict]]:
    timeout = aiohttp.ClientTimeout(total=seconds(120))
    async with aiohttp.ClientSession(timeout=timeout) as session:
        names = [f"voice-{first + i}" for i in range(UPLOADS)]
        return list(await asyncio.gather(*(upload(session, base, name, audio) for name in names)))


@pytest.fixture(scope="module")
def audio() -> bytes:
    return telephone_at_192_khz()  # ≈ 0.5 s of CPU: made once for the module


@pytest.fixture(scope="module")
def one_decode_slot_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """A real `serve` that decodes one voice file at a time and lets no one wait for the slot, shared by
    the module's two tests (each started its own: ≈ 1.5 s of CPU and 3 s of wall to ready): each sends
    its requests once the other's have all been answered, and an upload's voice is no input to an
    inline reference's speech."""
    state = tmp_path_factory.mktemp("decode-slots") / "state"
    args = ["--state-dir", str(state), "--voice-decodes", "1", "--voice-decode-wait", "0"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NPU_WORKER_TOKEN", None)
    process = ServeProcess(args, env)
    try:
        yield process
    finally:
        process.terminate_and_log(seconds(30))


@pytest.mark.allow_blocking
def test_uploads_past_the_decode_slots_get_a_503_with_retry_after(one_decode_slot_worker, audio):
    base = one_decode_slot_worker.base
    answers = asyncio.run(uploads_at_once(base, audio, 0))
    statuses = sorted(status for status, _wait, _body in answers)
    assert set(statuses) <= {201, 503} and statuses[0] == 201, answers
    busy = [(wait, body) for status, wait, body in answers if status == 503]
    assert busy, answers  # eight at once, one slot, no wait: all but those that ran alone refused
    for wait, body in busy:
        assert wait == "1" and body["error"]["code"] == "DecodersBusy", body
        assert body["error"]["message"].startswith("the worker decodes 1 voice audio file(s) at once"), body
    again = asyncio.run(_one(base, audio))
    assert again[0] == 201, again  # the slot was given back


async def _one(base: str, audio: bytes) -> tuple[int, str, dict]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=seconds(60))) as session:
        return await upload(session, base, "voice-again", audio)


async def speeches_at_once(base: str, audio: bytes) -> list[tuple[int, str, dict | None]]:
    body = {
        "model": "tts-1",
        "input": "하나.",
        "voice": "default",
        "response_format": "wav",
        "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(),
        "ref_text": "a test voice",
    }

    async def speak(session: aiohttp.ClientSession) -> tuple[int, str, dict | None]:
        async with session.post(f"{base}/v1/audio/speech", json=body) as answer:
            said = await answer.json() if answer.status != 200 else None
            await answer.read()
            return answer.status, answer.headers.get("Retry-After", ""), said

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=seconds(120))) as session:
        for _ in range(int(seconds(60) / 0.1)):  # the engine loads: speech is a 503 Loading until then
            async with session.get(f"{base}/ready") as ready:
                if ready.status == 200:
                    break
            await asyncio.sleep(0.1)
        return list(await asyncio.gather(*(speak(session) for _ in range(UPLOADS))))


@pytest.mark.allow_blocking
def test_inline_ref_audio_past_the_decode_slots_gets_a_503_with_retry_after(one_decode_slot_worker, audio):
    answers = asyncio.run(speeches_at_once(one_decode_slot_worker.base, audio))
    assert {status for status, _wait, _said in answers} <= {200, 503}, (answers, one_decode_slot_worker.log())
    busy = [(wait, said) for status, wait, said in answers if status == 503]
    assert busy and len(busy) < UPLOADS, answers
    assert all(wait == "1" and said and said["error"]["code"] == "DecodersBusy" for wait, said in busy), busy
