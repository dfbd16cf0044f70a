"""A voice upload or an inline `ref_audio` waiting for a decode slot holds its audio's bytes in the
worker's body budget (`decode_slots.py`): its body had left the budget once read, so each of the
connection cap's callers could park 5 MiB for the whole `--voice-decode-wait`. Through the real routes:
the app's one slot is held by a decode that waits for the test, the request waits behind it."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import tracemalloc

from npu_worker.app_keys import BODY_BUDGET_KEY, DECODE_SLOTS_KEY
from tests.openai_support import tone_wav
from tests.test_openai_voices import upload
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def waits_holding(client, send, expected: int, meanwhile=None) -> int:
    """`send()`'s answer's status, once the budget was seen holding `expected` bytes while it waited
    for the app's one decode slot (a body being read holds its pieces and their overhead: never that);
    `meanwhile()` is awaited then, while it still waits."""
    slots, budget, go_on = client.app[DECODE_SLOTS_KEY], client.app[BODY_BUDGET_KEY], threading.Event()
    busy = asyncio.create_task(slots.run(go_on.wait, seconds(30), holding=0))
    try:
        await asyncio.sleep(0.05)  # (the slot is taken)
        request = asyncio.create_task(send())
        async with asyncio.timeout(seconds(10)):
            while budget.held != expected:
                assert not request.done(), await request  # it was answered without waiting
                await asyncio.sleep(0.01)
        if meanwhile is not None:
            await meanwhile()
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


async def test_a_speech_request_waiting_to_decode_its_ref_audio_no_longer_holds_its_body(worker):
    """The body's bytes (the audio in base64, a third more) were kept beside the decoded audio for the
    whole wait, uncounted: the allocations `read_body` made are freed once the body is parsed."""
    client = await worker(voice_decodes=1, voice_decode_wait=seconds(30))
    audio = tone_wav(seconds_long=25.0, rate=48000)  # 2.4 MB; its body 3.2 MB
    body = {
        "model": "tts-1",
        "input": "하나.",
        "voice": "default",
        "response_format": "wav",
        "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(),
        "ref_text": "참조",
    }
    bodies_read: list[int] = []

    async def send() -> int:
        async with client.post("/v1/audio/speech", json=body) as answer:
            await answer.read()
            return answer.status

    async def look() -> None:  # while it waits: what of the worker's body reading is still allocated
        snapshot = tracemalloc.take_snapshot()
        bodies_read.extend(
            trace.size
            for trace in snapshot.traces
            if trace.size > len(audio) // 2
            and any(frame.filename.endswith("request_body.py") for frame in trace.traceback)
        )

    tracemalloc.start(25)
    try:
        assert await waits_holding(client, send, len(audio), look) == 200
    finally:
        tracemalloc.stop()
    assert bodies_read == []


async def test_a_stream_config_waiting_to_decode_its_ref_audio_no_longer_holds_its_message(worker):
    """`WS /v1/audio/speech/stream`: a `session.config` with inline `ref_audio` kept its message (the
    audio in base64, up to --max-body-bytes) and the configuration's copy of it beside the decoded
    audio for the whole wait, uncounted: while it waits only the decoded audio is alive."""
    client = await worker(voice_decodes=1, voice_decode_wait=seconds(30))
    audio = tone_wav(seconds_long=25.0, rate=48000)  # 2.4 MB; its message 3.2 MB
    config = {
        "type": "session.config",
        "model": "tts-1",
        "response_format": "pcm",
        "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(),
        "ref_text": "참조",
    }
    large: list[int] = []
    async with client.ws_connect("/v1/audio/speech/stream") as ws:

        async def send() -> str:
            await ws.send_json(config)
            return (await ws.receive_json(timeout=seconds(30)))["type"]

        async def look() -> None:  # while it waits: every block as large as half the audio
            await asyncio.sleep(0.1)  # (the handler's reading has gone on to wait for the next frame)
            large.extend(
                trace.size for trace in tracemalloc.take_snapshot().traces if trace.size > len(audio) // 2
            )

        tracemalloc.start(1)
        try:
            assert await waits_holding(client, send, len(audio), look) == "session.configured"
        finally:
            tracemalloc.stop()
    assert len(large) == 1 and len(audio) <= large[0] < len(audio) + 1024, large  # the decoded audio
    assert client.app[BODY_BUDGET_KEY].held == 0


async def hangs_up_while_it_waits(client, send, expected: int) -> None:
    """`send()` waits for the app's one decode slot holding `expected` bytes, then its caller hangs up:
    the wait ends at once (its bytes leave the budget well before the slot is free) and nothing is
    decoded for it once the slot is free."""
    slots, budget, go_on = client.app[DECODE_SLOTS_KEY], client.app[BODY_BUDGET_KEY], threading.Event()
    busy = asyncio.create_task(slots.run(go_on.wait, seconds(60), holding=0))
    try:
        await asyncio.sleep(0.05)  # (the slot is taken)
        request = asyncio.create_task(send())
        async with asyncio.timeout(seconds(10)):
            while budget.held != expected:
                assert not request.done(), await request  # it was answered without waiting
                await asyncio.sleep(0.01)
        request.cancel()  # the client closes the connection
        async with asyncio.timeout(seconds(10)):  # the slot stays busy meanwhile
            while budget.held:
                await asyncio.sleep(0.05)
        assert not busy.done()
    finally:
        go_on.set()
        await busy
    assert await slots.run(len, b"abc", holding=0) == 3  # no slot was kept for the wait given up


async def test_an_upload_whose_caller_hangs_up_while_it_waits_for_a_decode_slot_gives_up(worker):
    """Its bytes stayed in the budget for the whole --voice-decode-wait, then the voice was decoded and
    stored for nobody (a retry of the same name was a 409 VoiceExists)."""
    client = await worker(voice_decodes=1, voice_decode_wait=seconds(60))
    audio = tone_wav(seconds_long=2.0)
    fields = len("gone") + len("안녕하세요 여러분".encode()) + len(audio)
    await hangs_up_while_it_waits(client, lambda: upload(client, "gone", audio), fields)
    async with client.get("/v1/audio/voices") as listed:
        assert "gone" not in (await listed.json())["voices"]


async def test_inline_ref_audio_whose_caller_hangs_up_while_it_waits_for_a_decode_slot_gives_up(worker):
    client = await worker(voice_decodes=1, voice_decode_wait=seconds(60))
    audio = tone_wav(seconds_long=2.0)
    body = {
        "model": "tts-1",
        "input": "하나.",
        "voice": "default",
        "response_format": "wav",
        "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(),
        "ref_text": "참조",
    }

    async def send() -> None:
        async with client.post("/v1/audio/speech", json=body) as answer:
            await answer.read()

    await hangs_up_while_it_waits(client, send, len(audio))


async def test_a_speech_requests_decoded_ref_audio_is_not_kept_while_its_audio_streams(worker):
    """`create_speech` kept the parsed request, and in it the inline ref_audio's decoded bytes (up to
    three quarters of --max-body-bytes, out of the body budget), for as long as the audio streamed.
    (The decode thread's executor lets its arguments go a moment after the result: polled.)"""
    engine = ToneEngine()
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    audio = tone_wav(seconds_long=25.0, rate=48000)  # 2.4 MB
    body = {
        "model": "tts-1",
        "input": "가" * 20,  # 0.4 s: 4 chunks
        "response_format": "wav",
        "ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(),
        "ref_text": "참조",
    }
    raw = json.dumps(body).encode()  # (made before tracing starts: the worker's blocks are traced)

    def large() -> list[int]:
        return [trace.size for trace in tracemalloc.take_snapshot().traces if trace.size > len(audio) // 2]

    gate.allow(1)
    tracemalloc.start(1)
    try:  # its head and first audio come once the handler streams (the gate holds the rest)
        answer = await client.post("/v1/audio/speech", data=raw, headers={"Content-Type": "application/json"})
        await until(lambda: not large(), "no block of the audio's size while it streams")
    finally:
        tracemalloc.stop()
        gate.open()
    async with answer:
        assert answer.status == 200
        await answer.read()
