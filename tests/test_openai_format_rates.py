"""A response_format its codec cannot encode at the engine's sample rate (opus at 22 050 or 96 000 Hz,
mp3 at 96 000 Hz) is a 400 UnsupportedFormat naming what works at that rate, on every route (it was
libsndfile's error: a 500 InternalError, or an item's InternalError in a batch)."""

from __future__ import annotations

import json

import aiohttp
import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.tone_engine import ToneEngine

GOOD = {"model": "tts-1", "input": "안녕하세요.", "voice": "default"}


def assert_refused(error: dict, name: str, rate: int) -> None:
    assert (error["code"], error["param"]) == ("UnsupportedFormat", "response_format"), error
    assert f"{rate} Hz" in error["message"] and name in error["message"]
    assert "wav" in error["message"] and "flac" in error["message"]  # what works at that rate


@pytest.mark.parametrize(("rate", "name"), [(22050, "opus"), (96000, "opus"), (96000, "mp3")])
@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_format_the_codec_cannot_make_at_the_engines_rate_is_a_400(worker, rate, name, stream_format):
    client = await worker(ToneEngine(sample_rate=rate))
    body = {**GOOD, "response_format": name, "stream_format": stream_format}
    async with client.post("/v1/audio/speech", json=body) as response:
        assert response.status == 400, await response.text()
        assert_refused((await response.json())["error"], name, rate)
    assert client.app[SCHEDULER_KEY].jobs_running() == 0  # refused before it was queued


@pytest.mark.parametrize(("rate", "name"), [(22050, "flac"), (22050, "mp3"), (48000, "opus")])
async def test_a_format_the_codec_makes_at_the_engines_rate_still_answers(worker, rate, name):
    client = await worker(ToneEngine(sample_rate=rate))
    async with client.post("/v1/audio/speech", json={**GOOD, "response_format": name}) as response:
        assert response.status == 200, await response.text()
        assert len(await response.read()) > 100


async def test_the_default_format_at_a_rate_mp3_cannot_make_is_wav(worker):
    client = await worker(ToneEngine(sample_rate=96000))
    async with client.post("/v1/audio/speech", json=GOOD) as response:
        assert response.status == 200, await response.text()
        assert response.headers["Content-Type"] == "audio/wav"


async def test_a_batch_refuses_a_default_format_the_engines_rate_cannot_take_at_once(worker):
    client = await worker(ToneEngine(sample_rate=22050))
    body = {"response_format": "opus", "items": [{"input": "가"}, {"input": "나"}]}
    async with client.post("/v1/audio/speech/batch", json=body) as response:
        assert response.status == 400, await response.text()
        assert_refused((await response.json())["error"], "opus", 22050)


async def test_the_stream_socket_refuses_the_format_in_its_session_config(worker):
    client = await worker(ToneEngine(sample_rate=22050))
    async with client.ws_connect("/v1/audio/speech/stream") as ws:
        await ws.send_str(json.dumps({"type": "session.config", "response_format": "opus"}))
        message = await ws.receive(timeout=30)
        assert message.type == aiohttp.WSMsgType.TEXT, message
        answer = json.loads(message.data)
    assert answer["type"] == "error", answer
    assert_refused(answer, "opus", 22050)
