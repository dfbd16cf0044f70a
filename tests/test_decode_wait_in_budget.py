"""A voice upload or an inline `ref_audio` waiting for a decode slot holds its audio's bytes in the
worker's body budget (`decode_slots.py`): its body had left the budget once read, so each of the
connection cap's callers could park 5 MiB for the whole `--voice-decode-wait`. Through the real routes:
the app's one slot is held by a decode that waits for the test, the request waits behind it."""

from __future__ import annotations

import asyncio
import base64
import threading

from npu_worker.app_keys import BODY_BUDGET_KEY, DECODE_SLOTS_KEY
from tests.openai_support import tone_wav
from tests.test_openai_voices import upload
from tests.timing import seconds


async def waits_holding(client, send, expected: int) -> int:
    """`send()`'s answer's status, once the budget was seen holding `expected` bytes while it waited
    for the app's one decode slot (a body being read holds its pieces and their overhead: never that)."""
    slots, budget, go_on = client.app[DECODE_SLOTS_KEY], client.app[BODY_BUDGET_KEY], threading.Event()
    busy = asyncio.create_task(slots.run(go_on.wait, seconds(30), holding=0))
    try:
        await asyncio.sleep(0.05)  # (the slot is taken)
        request = asyncio.create_task(send())
        async with asyncio.timeout(seconds(10)):
            while budget.held != expected:
                assert not request.done(), await request  # it was answered without waiting
                await asyncio.sleep(0.01)
        go_on.set()
        return await request
    finally:
        go_on.set()
        await busy


async def test_an_upload_waiting_for_a_decode_slot_holds_its_audio_in_the_budget(worker):
    client = await worker(voice_decodes=1, voice_decode_wait=seconds(30))
    audio = tone_wav(seconds_long=2.0)

    async def send() -> int:
        return (await upload(client, "waiting", audio)).status

    fields = len("waiting") + len("안녕하세요 여러분".encode()) + len(audio)  # name, ref_text, audio
    assert await waits_holding(client, send, fields) == 201
    assert client.app[BODY_BUDGET_KEY].held == 0


async def test_inline_ref_audio_waiting_for_a_decode_slot_holds_its_audio_in_the_budget(worker):
    client = await worker(voice_decodes=1, voice_decode_wait=seconds(30))
    audio = tone_wav(seconds_long=2.0)
    body = {
        "model": "tts-1",
        "input": "하나.",
        "voice": "default",
        "response_format": "wav",
        "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(),
        "ref_text": "참조",
    }

    async def send() -> int:
        async with client.post("/v1/audio/speech", json=body) as answer:
            await answer.read()
            return answer.status

    assert await waits_holding(client, send, len(audio)) == 200
    assert client.app[BODY_BUDGET_KEY].held == 0
