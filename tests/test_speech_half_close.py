"""An OpenAI speech request for a whole file (flac, sent at the end) whose caller ends its sending side
(`shutdown(SHUT_WR)`, a FIN) just as its audio is done, on a real socket behind the connection guard:
the caller still reads its whole file, as a `/synth` caller reads its 200. It was cut off with nothing
sent (a 499): the FIN's cancel closed the answer's stream of audio before its `done`, and the answer
stopped at the FIN itself. The engine thread is held at the section's `ok` until the cancel is taken
(tests/test_synth_hang_up_too_late.HeldAtOk), so the race is made, not hoped for."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import aiohttp
import soundfile

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_synth_hang_up_too_late import HeldAtOk
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

HEAD = (
    b"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n"
)


async def half_closed_as_its_audio_was_done(served, body: bytes) -> tuple[Any, bytes]:
    """The worker, and what a caller that sent `body`, then its FIN just as the audio was done, read."""
    listener = await served(ToneEngine())
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(HEAD % len(body) + body)
        await writer.drain()
        assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the section's ok"
        job = held.job
        writer.write_eof()  # the caller's FIN: its cancel is taken while the job's end is unlogged
        await until(lambda: job.cancel_requested.requested, "the hang-up's cancel")
        held.release.set()
        async with asyncio.timeout(seconds(20)):
            return listener, await reader.read()
    finally:
        held.release.set()
        writer.close()


async def test_a_whole_file_speech_whose_caller_half_closed_as_its_audio_was_done_is_answered(served):
    body = json.dumps({"input": "안녕하세요.", "response_format": "flac"}).encode()
    listener, answer = await half_closed_as_its_audio_was_done(served, body)
    head, _, audio = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer[:300]
    assert b"content-type: audio/flac" in head.lower(), head
    async with aiohttp.ClientSession() as session:  # the same request, read as a caller reads it
        async with session.post(f"http://127.0.0.1:{listener.port}/v1/audio/speech", data=body) as whole:
            assert whole.status == 200
            expected = soundfile.read(io.BytesIO(await whole.read()))[0]
    assert len(soundfile.read(io.BytesIO(audio))[0]) == len(expected) > 0


async def test_a_whole_file_sse_speech_whose_caller_half_closed_as_its_audio_was_done_is_answered(served):
    """The same as server-sent events: flac sends no delta until the end, and the answer was a 499."""
    body = json.dumps({"input": "안녕하세요.", "response_format": "flac", "stream_format": "sse"}).encode()
    _, answer = await half_closed_as_its_audio_was_done(served, body)
    head, _, events = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), answer[:300]
    assert b"speech.audio.delta" in events and b"speech.audio.done" in events, events[-300:]


class JobsSeen:
    """The journal's observer, keeping the jobs it was told of."""

    def __init__(self, observer: Any) -> None:
        self._observer = observer
        self.jobs: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._observer, name)

    def event(self, job: Any, event: Any) -> None:
        self._observer.event(job, event)
        if job not in self.jobs:
            self.jobs.append(job)


async def test_a_half_close_before_the_audio_is_done_still_stops_the_synthesis(served):
    """The FIN still cancels the job: its engine stops at its next chunk, the caller reads no file."""
    listener = await served(ToneEngine(delay_per_chunk=0.05))  # 2 000 characters: 400 chunks, 20 s
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    seen = journal.observer = JobsSeen(journal.observer)
    body = json.dumps({"input": "가" * 2000, "response_format": "flac"}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(HEAD % len(body) + body)
        await writer.drain()
        await until(lambda: seen.jobs, "the job's first event")
        writer.write_eof()
        async with asyncio.timeout(seconds(20)):
            answer = await reader.read()
    finally:
        writer.close()
    assert not answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    (job,) = seen.jobs
    await until(lambda: job.done_event is not None, "the job's done")
    assert job.done_event.cancelled is True and job.ok_count == 0, job.done_event
