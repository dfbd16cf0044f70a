"""A named voice on the ZipVoice engine: its prompt features are computed once, then reused."""

from __future__ import annotations

import base64
import json

import aiohttp
import numpy as np
import pytest
import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import wav_bytes
from tests.openai_support import RATE, async_sdk, decode
from tests.test_openai_stream_ws import receive, receive_until, stream_url
from tests.zipvoice.test_server_e2e import start

pytestmark = pytest.mark.usefixtures("openai_sdks_closed")


async def test_a_named_voice_builds_its_prompt_once_and_speaks(worker, tiny_model_dir, tmp_path):
    client = await start(worker, tiny_model_dir, tmp_path)
    prompts = client.app[SCHEDULER_KEY].engine.prompts
    built = []
    original_build = prompts.build

    def counting_build(voice, lang):  # the real build, counted
        built.append(voice.ref_wav)
        return original_build(voice, lang)

    prompts.build = counting_build
    form = aiohttp.FormData()
    form.add_field("name", "teacher")
    form.add_field("ref_text", (tiny_model_dir / "reference_ko.txt").read_text(encoding="utf-8"))
    form.add_field("audio_sample", (tiny_model_dir / "reference_ko.wav").read_bytes(), filename="ref.wav")
    async with client.post("/v1/audio/voices", data=form) as response:
        assert response.status == 201
    sdk = async_sdk(client)
    for text in ("안녕하세요.", "다시 만났네요."):
        response = await sdk.audio.speech.create(
            model="tts-1", input=text, voice="teacher", response_format="wav"
        )
        samples, rate = decode(response.content, "wav")
        assert rate == RATE and samples.size > 0
    assert len(built) == 1 and built[0].endswith("voices/teacher.wav")


async def test_a_reference_refused_at_synthesis_names_the_field_that_gave_it(
    worker, tiny_model_dir, tmp_path
):
    """The engine's refusals of a reference (`InvalidAudio` for its audio, `BadRequest` for its
    transcript) came back with `param: null`: a caller could not tell its voice from its text."""
    client = await start(worker, tiny_model_dir, tmp_path)
    audio = (tiny_model_dir / "reference_ko.wav").read_bytes()
    inline = "data:audio/wav;base64," + base64.b64encode(audio).decode()
    whisper = wav_bytes(0.001 * np.sin(np.arange(RATE, dtype=np.float32) / 4), RATE)  # -63 dBFS
    inaudible = "data:audio/wav;base64," + base64.b64encode(whisper).decode()
    form = aiohttp.FormData()
    form.add_field("name", "mumbled")
    form.add_field("ref_text", "...")  # nothing speakable: refused when the voice is first used
    form.add_field("audio_sample", audio, filename="ref.wav")
    async with client.post("/v1/audio/voices", data=form) as response:
        assert response.status == 201
    for body, param in (
        ({"ref_audio": inline, "ref_text": "..."}, "ref_text"),
        ({"voice": "mumbled"}, "voice"),
        ({"voice": "mumbled", "ref_text": "..."}, "ref_text"),  # a ref_text wins over the stored one
        ({"ref_audio": inaudible, "ref_text": "안녕하세요."}, "ref_audio"),
    ):
        speech = {"model": "tts-1", "input": "안녕하세요.", "response_format": "wav", **body}
        async with client.post("/v1/audio/speech", json=speech) as response:
            error = (await response.json())["error"]
            assert response.status == 400 and error["param"] == param, error
        batch = {"items": [speech]}
        async with client.post("/v1/audio/speech/batch", json=batch) as response:
            assert (await response.json())["results"][0]["error"]["param"] == param
        async with websockets.connect(stream_url(client)) as ws:
            await ws.send(json.dumps({"type": "session.config", **body}))
            assert (await receive(ws))["type"] == "session.configured"
            await ws.send(json.dumps({"type": "input.text", "text": "안녕하세요."}))
            await ws.send(json.dumps({"type": "input.done"}))
            error = next(e for e in await receive_until(ws, "session.done") if e["type"] == "error")
            assert error["param"] == param, error
