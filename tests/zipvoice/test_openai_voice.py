"""A named voice on the ZipVoice engine: its prompt features are computed once, then reused."""

from __future__ import annotations

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.openai_support import RATE, async_sdk, decode
from tests.zipvoice.test_server_e2e import start


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
