"""An OpenAI speech batch whose caller ends its sending side (a FIN) just as its items' audio is done,
on a real socket behind the connection guard: the caller still reads its answer, every item's audio,
as a single speech request's caller does (tests/test_speech_half_close.py). It was cut off with an
empty 499: the FIN ended the batch's wait at once and stopped every item, work all done. A FIN while an
item's audio is still being made still stops it (its engine at the next chunk) and answers nothing.
The engine thread is held at the item's `ok` until the cancel is taken (HeldAtOk)."""

from __future__ import annotations

import asyncio
import base64
import json
import threading

from npu_worker.app_keys import BODY_BUDGET_KEY, DECODE_SLOTS_KEY, SCHEDULER_KEY
from tests.openai_support import tone_wav
from tests.test_speech_half_close import JobsSeen
from tests.test_synth_hang_up_too_late import HeldAtOk, half_closed_at_ok
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

HEAD = (
    b"POST /v1/audio/speech/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n"
)


async def test_a_batch_whose_caller_half_closed_as_its_audio_was_done_is_answered(served):
    listener = await served(ToneEngine())
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    body = json.dumps({"items": [{"input": "안녕하세요.", "response_format": "wav"}]}).encode()
    answer, _ = await half_closed_at_ok(listener.port, held, HEAD % len(body) + body)
    head, _, result = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer[:300]
    batch = json.loads(result)
    assert (batch["succeeded"], batch["failed"]) == (1, 0), batch
    assert batch["results"][0]["audio_data"], batch


async def test_a_half_close_before_the_audio_is_done_still_stops_the_batch(served):
    listener = await served(ToneEngine(delay_per_chunk=0.05))  # 2 000 characters: 400 chunks, 20 s
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    seen = journal.observer = JobsSeen(journal.observer)
    body = json.dumps({"items": [{"input": "가" * 2000, "response_format": "wav"}]}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(HEAD % len(body) + body)
        await writer.drain()
        await until(lambda: seen.jobs, "the item's first event")
        writer.write_eof()
        async with asyncio.timeout(seconds(20)):
            answer = await reader.read()
    finally:
        writer.close()
    assert not answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    (job,) = seen.jobs
    await until(lambda: job.done_event is not None, "the job's done")
    assert job.done_event.cancelled is True and job.ok_count == 0, job.done_event


async def test_a_half_close_stops_an_item_not_queued_yet_and_answers_nothing(served):
    """An item still waiting for a decode slot (its inline `ref_audio`) when the FIN comes is stopped
    there, never queued, while the item running beside it is only cancelled (too late: it ends ok);
    the batch, one item stopped, is answered nothing (499), and the waiting item's bytes leave the
    budget. The app's one decode slot is held by the test."""
    listener = await served(ToneEngine(), voice_decodes=1, voice_decode_wait=seconds(30))
    app = listener.runner.app
    journal = app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    slots, budget, go_on = app[DECODE_SLOTS_KEY], app[BODY_BUDGET_KEY], threading.Event()
    busy = asyncio.create_task(slots.run(go_on.wait, seconds(30), holding=0))
    audio = tone_wav(seconds_long=2.0)
    inline = {"ref_audio": "data:audio/wav;base64," + base64.b64encode(audio).decode(), "ref_text": "참조"}
    body = json.dumps({"items": [{"input": "안녕하세요."}, {"input": "하나.", **inline}]}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(HEAD % len(body) + body)
        await writer.drain()
        assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the first item's ok"
        await until(lambda: budget.held == len(audio), "the second item waiting for a decode slot")
        job = held.job
        writer.write_eof()
        await until(lambda: job.cancel_requested.requested, "the hang-up's cancel")
        held.release.set()
        async with asyncio.timeout(seconds(20)):
            answer = await reader.read()
        await until(lambda: budget.held == 0, "the waiting item stopped")
    finally:
        held.release.set()
        go_on.set()
        writer.close()
        await busy
    assert answer.startswith(b"HTTP/1.1 499 "), answer[:300]  # (not a 500: the stopped item's end is read)
    await until(lambda: job.done_event is not None, "the first item's done")
    assert job.done_event.cancelled is False  # its cancel came too late
