"""An OpenAI speech batch whose caller ends its sending side (a FIN) just as its items' audio is done,
on a real socket behind the connection guard: the caller still reads its answer, every item's audio,
as a single speech request's caller does (tests/test_speech_half_close.py). It was cut off with an
empty 499: the FIN ended the batch's wait at once and stopped every item, work all done. A FIN while an
item's audio is still being made still stops it (its engine at the next chunk) and answers nothing.
The engine thread is held at the item's `ok` until the cancel is taken (HeldAtOk)."""

from __future__ import annotations

import asyncio
import json

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_speech_half_close import JobsSeen
from tests.test_synth_hang_up_too_late import HeldAtOk
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
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(HEAD % len(body) + body)
        await writer.drain()
        assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the item's ok"
        job = held.job
        writer.write_eof()  # the caller's FIN: its cancel is taken while the job's end is unlogged
        await until(lambda: job.cancel_requested.requested, "the hang-up's cancel")
        held.release.set()
        async with asyncio.timeout(seconds(20)):
            answer = await reader.read()
    finally:
        held.release.set()
        writer.close()
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
