"""POST /v1/audio/speech while it runs: a caller that hangs up, a queued request, a cancelled start,
and downloads far longer than the live buffer."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.openai_support import RATE, expected_samples, hang_up_after_two_chunks
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_caller_that_hangs_up_stops_the_synthesis(worker, stream_format):
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.02)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    text = "가" * 200  # 80 chunks of 50 ms, 1.6 s of engine time
    gate.allow(2)
    try:
        body = {"input": text, "response_format": "pcm", "stream_format": stream_format}
        response = await client.post("/v1/audio/speech", json=body)
        assert response.status == 200
        await response.content.readany()
        response.close()  # hang up mid-stream
        gate.open()
        await until(lambda: scheduler.jobs_running() == 0)
    finally:
        gate.open()
    assert gate.passed < 40


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_queued_request_whose_caller_hangs_up_is_never_made(worker, stream_format):
    """A hang-up was noticed only once the first chunk arrived: a request queued behind another, whose
    caller had already left, still cost the engine its first chunk (and a whole-file format all of it)."""
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    body = {"response_format": "pcm", "stream_format": stream_format}
    try:
        first = asyncio.ensure_future(client.post("/v1/audio/speech", json={**body, "input": "앞 " * 20}))
        await until(lambda: engine.calls)
        queued = asyncio.ensure_future(client.post("/v1/audio/speech", json={**body, "input": "뒤 " * 20}))
        await until(lambda: scheduler.jobs_running() >= 2)
        queued.cancel()  # the caller gives up while its request waits: its connection closes
        with contextlib.suppress(asyncio.CancelledError):
            await queued
        await until(lambda: scheduler.jobs_running() <= 1)
        gate.open()
        (await first).close()
        await until(lambda: scheduler.jobs_running() == 0)
    finally:
        gate.open()
    assert engine.calls == ["앞 " * 20], engine.calls


@pytest.mark.parametrize("stream_format", ["audio", "sse"])
async def test_a_whole_file_answer_whose_caller_left_is_a_499_not_a_200(worker, stream_format):
    """A flac answer (written only when whole) whose caller hung up mid-synthesis was counted (access
    log, metrics) as a 200 with an empty body: the unstarted response was returned, and so sent."""
    from tests.test_metrics import scrape, value

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    body = {"input": "가" * 100, "response_format": "flac", "stream_format": stream_format}
    await hang_up_after_two_chunks(client, gate, "/v1/audio/speech", body)
    async with asyncio.timeout(seconds(10)):
        while True:
            samples = await scrape(client)
            counted = {
                status: value(
                    samples,
                    "npu_worker_http_requests_total",
                    method="POST",
                    route="/v1/audio/speech",
                    status=status,
                )
                for status in ("200", "499")
            }
            if any(counted.values()):
                break
            await asyncio.sleep(0.05)
    assert counted == {"200": 0, "499": 1}, counted


async def test_a_download_far_longer_than_the_live_buffer_arrives_whole(worker):
    """A fast engine runs minutes ahead of the writer: a whole-text download is not a slow consumer."""
    engine = ToneEngine(seconds_per_char=0.2, chunk_seconds=0.5)
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    text = "가" * 1000  # 200 s of audio, far more than /ws's 30 s of unread audio
    async with client.post("/v1/audio/speech", json={"input": text, "response_format": "pcm"}) as response:
        first = await response.content.readany()
        async with asyncio.timeout(seconds(30)):
            while scheduler.jobs_running():  # the engine has made all of it while we did not read
                await asyncio.sleep(0.01)
        rest = await response.read()
    assert len(first + rest) == expected_samples(text, seconds_per_char=0.2) * 2 == 200 * RATE * 2


async def test_a_slow_speed_download_is_not_a_slow_consumer(worker, monkeypatch):
    """The unread-audio bound assumed 0.3 s of audio per character; at speed 0.25 a text makes four
    times that, so a long one, made fast and read at the listener's pace, was cut as a slow consumer.
    At a tenth of the scale (a 60 s floor, 200 characters a section): 10 times less audio to make."""
    from npu_worker.openai_compat import speech

    monkeypatch.setattr(speech, "DOWNLOAD_BUFFER_SECONDS", 60.0)
    engine = ToneEngine(seconds_per_char=0.2, chunk_seconds=0.5)
    client = await worker(engine, max_text_chars=200)
    scheduler = client.app[SCHEDULER_KEY]
    text = "가" * 100  # 80 s of audio at speed 0.25: more than the 60 s (0.3 s x 200) a download held
    body = {"input": text, "response_format": "pcm", "speed": 0.25}
    async with client.post("/v1/audio/speech", json=body) as response:
        first = await response.content.readany()
        async with asyncio.timeout(seconds(60)):
            while scheduler.jobs_running():
                await asyncio.sleep(0.01)
        rest = await response.read()
    assert len(first + rest) == expected_samples(text, 0.25, seconds_per_char=0.2) * 2


async def test_a_speech_start_cancelled_while_its_job_is_admitted_leaves_no_job_running(worker):
    """Admission may finish in a thread after the caller's task was cancelled (it hung up, its socket
    closed): the job it admits is cancelled, not run for nobody (only the stream socket did so before)."""
    import threading

    from npu_worker.openai_compat.core import start_speech
    from npu_worker.protocol import SynthParams

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.01)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    held = asyncio.ensure_future(start_speech(scheduler, "앞 글", SynthParams(lang="ko")))
    async with asyncio.timeout(seconds(10)):
        while not engine.calls:  # the engine is busy with the first text (held by the gate)
            await asyncio.sleep(0.01)
    admitting, release, admitted = threading.Event(), threading.Event(), threading.Event()
    admit = scheduler._admit

    def slow_admit(job, request):  # the admission thread, held until the caller has gone
        admitting.set()
        release.wait(seconds(10))
        admit(job, request)
        admitted.set()

    scheduler._admit = slow_admit
    scheduler.checks.langs.discard("ko")  # the admission goes to a thread
    starting = asyncio.ensure_future(start_speech(scheduler, "아무도 듣지 않는 글", SynthParams(lang="ko")))
    await until(admitting.is_set)
    starting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await starting
    release.set()
    await until(admitted.is_set)
    live = scheduler.admission.live_jobs
    await until(
        lambda: sum(not job.cancel_requested.is_set() for job in live()) == 1, "only the held run live"
    )
    gate.open()
    (await held).cancel()
    await until(lambda: scheduler.jobs_running() == 0)
    assert engine.calls == ["앞 글"], engine.calls


@pytest.mark.parametrize("stream_format", ["sse", "audio"])
async def test_a_caller_that_stops_reading_before_the_end_is_given_up_at_the_end(
    served, monkeypatch, stream_format
):
    """The answer's end (`write_eof`: SSE's `speech.audio.done` or `error`, a stream's last chunk)
    waits for the caller's socket to drain, and was under no deadline: a caller that read nothing more
    once the audio was sent held its connection and the handler as long as it kept the socket open.
    (Its buffers are made small, and the worker's side told to wait at any unsent byte, so that the
    end, not an earlier write, is what finds them full.)"""
    import json
    import socket
    import threading

    from npu_worker.http_compat import hang_up

    monkeypatch.setattr(hang_up, "WRITE_GRACE_SECONDS", 0.5)
    monkeypatch.setattr(hang_up, "MIN_READ_BYTES_PER_SECOND", 10**12)
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = threading.Event()
    listener = await served(engine)
    body = json.dumps(
        {"input": "가" * 30, "response_format": "pcm", "stream_format": stream_format}
    ).encode()  # 0.6 s: 28.8 KB of audio, no write of it large enough to wait for the socket itself
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads
    client.setblocking(False)
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_connect(client, ("127.0.0.1", listener.port))
        head = (
            "POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        await loop.sock_sendall(client, head.encode() + body)
        try:
            await until(lambda: engine.calls, "the synthesis to start")
            (handler,) = listener.guard.open
            handler.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            handler.transport.set_write_buffer_limits(high=1)
        finally:
            engine.gate.set()
        await until(lambda: not listener.guard.open, "the worker to give up on the caller")
    finally:
        client.close()
