"""The pipeline client (sync and async) against a worker that makes it wait, on a real socket: one that
stops answering, one that says `Loading` (or `QueueFull`) with a `Retry-After` in seconds or as a date,
one whose re-attached stream is quiet; each wait is the one it asks for, bounded, and said."""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from npu_worker import client
from tests.rogue_worker import RogueWorker, ndjson, reply
from tests.test_client_rogue_worker import DONE, OK0, OK1, START, both, poll, stream
from tests.timing import seconds


@both
@pytest.mark.parametrize("mode", ["stream", "poll"])
async def test_a_worker_that_stops_answering_is_given_up_after_the_answer_timeout(use_async, mode: str):
    """A worker that takes connections but answers nothing (SIGSTOP, a hung host): each re-attach, and
    each poll, waited the whole read timeout for an answer (11 tries of 120 s, 25 minutes, before a
    stream was given up; 11 of 60 s for a poll). Here the read timeout is a minute, and the three tries
    end after their 0.2 s answer timeout each."""
    released = asyncio.Event()

    async def silent() -> AsyncIterator[bytes]:
        await released.wait()
        yield b""

    accepted = reply(200, b'{"job_id": "j1", "status": "queued", "total": 2}')

    def script(method: str, path: str) -> Any:
        if method == "POST":  # the stream ends after its start: the client re-attaches
            return ndjson(START) if mode == "stream" else accepted
        return silent()

    async with RogueWorker(script) as rogue:
        try:
            with pytest.raises(client.TransportError) as lost:
                if mode == "stream":
                    await stream(rogue.base, use_async, read_timeout=seconds(60), answer_timeout=0.2)
                else:
                    await poll(rogue.base, use_async, timeout=seconds(60), answer_timeout=0.2)
        finally:
            released.set()
    asked = "/jobs/j1/events?after=1" if mode == "stream" else "/jobs/j1/status"
    said = str(lost.value)  # the socket's timeout (sync), or the deadline of the head as a whole
    assert set(rogue.requests[1:]) == {("GET", asked)}
    assert "timed out" in said or "no whole answer within 0.2 s" in said, said
    assert mode == "poll" or "re-attaching failed 3 times" in str(lost.value)


LOADING = reply(
    503,
    b'{"status": "fail", "error": "Loading: the engine is still loading; retry shortly"}',
    headers="Retry-After: 0.05\r\n",
)


def loading_then(answers: dict[str, bytes], loading: int, mode: str) -> Any:
    """A worker that restarts once the batch is under way: its first `loading` answers after the
    submission are `Loading` 503s with a Retry-After (it loads), then it serves `answers` by path's end."""
    accepted = reply(200, b'{"job_id": "j1", "status": "queued", "total": 2}')
    left = [loading]

    def script(method: str, path: str) -> bytes:
        if method == "POST":
            return ndjson(START) if mode == "stream" else accepted
        if path == "/health":  # asked after each "not now" to a re-attach: it loads
            return reply(503, b'{"status": "loading", "loaded": false}', headers="Retry-After: 1\r\n")
        if left[0] > 0:
            left[0] -= 1
            return LOADING
        return next(answer for end, answer in answers.items() if path.endswith(end))

    return script


def served(mode: str) -> dict[str, bytes]:
    if mode == "stream":
        return {"": ndjson(OK0, OK1, DONE)}
    ok = [dict(OK0, event="progress"), dict(OK1, event="progress")]
    result = json.dumps({"job_id": "j1", "status": "done", "total": 2, "sections": ok}).encode()
    return {
        "/status": reply(200, b'{"job_id": "j1", "status": "done", "done": 2, "total": 2}'),
        "/result": reply(200, result),
    }


@both
@pytest.mark.parametrize("mode", ["stream", "poll"])
async def test_a_worker_that_says_it_is_loading_is_waited_for_past_the_attempts(use_async, mode: str):
    """A restarted worker answers `Loading` 503 with a Retry-After until its engine is up (minutes on an
    NPU that compiles): each answer spent a re-attach attempt, so the batch was given up after ≈ 40 s
    (here: 3 tries) although the worker came back. Now each wait is the one it asks for, told to
    `on_progress` as a `waiting` event, and the attempts are kept for a worker that does not answer."""
    events: list[dict[str, Any]] = []
    options = {"on_progress": lambda idx, event: events.append(event)}
    async with RogueWorker(loading_then(served(mode), 6, mode)) as rogue:
        if mode == "stream":
            result = await stream(rogue.base, use_async, **options)
        else:
            result = await poll(rogue.base, use_async, **options)
    assert result["wav_paths"] == ["/w/s00.wav", "/w/s01.wav"]
    waits = [event for event in events if event["event"] == "waiting"]
    assert [(w["status"], w["retry_after"], w["wait_limit"]) for w in waits] == [(503, 0.05, 900.0)] * 6
    assert {w["error"] for w in waits} == {"Loading: the engine is still loading; retry shortly"}
    assert [w["waited"] for w in waits] == sorted(w["waited"] for w in waits) and waits[-1]["waited"] > 0
    asked = [path for _, path in rogue.requests]
    assert len(asked) - asked.count("/health") == 1 + 6 + (1 if mode == "stream" else 2)
    assert asked.count("/health") == (6 if mode == "stream" else 0)


@both
@pytest.mark.parametrize("mode", ["stream", "poll"])
async def test_a_worker_that_stays_loading_is_given_up_after_the_wait_limit(use_async, mode: str):
    """The wait is bounded: past `wait_limit` seconds of "not now" in a row the client gives up, in words
    (polling: what it asked, how often and for how long, with the worker's last words)."""
    async with RogueWorker(loading_then({}, 10**6, mode)) as rogue:
        if mode == "stream":
            with pytest.raises(
                client.TransportError, match=r"after ([\d.]+) s of waiting \(wait_limit\)"
            ) as lost:
                await stream(rogue.base, use_async, wait_limit=0.25)
            waited = re.search(r"after ([\d.]+) s of waiting", str(lost.value))
        else:
            with pytest.raises(client.WorkerHTTPError) as lost:
                await poll(rogue.base, use_async, wait_limit=0.25)
            assert lost.value.error_name == "Loading" and lost.value.status == 503
            waited = re.search(
                r"GET /jobs/j1/status: given up after \d+ tries in [\d.]+ s, the last ([\d.]+) s",
                str(lost.value),
            )
            assert "answered 'not now' (wait_limit)" in str(lost.value)
        assert waited is not None and float(waited[1]) >= 0.25, str(lost.value)
        assert "Loading: the engine is still loading" in str(lost.value)
    asked = [path for _, path in rogue.requests if path != "/health"]
    assert 2 < len(asked) <= 1 + 6  # 0.25 s in waits of 0.05 s (and the answers' time), then the last answer


@both
async def test_a_submission_to_a_loading_worker_waits_past_the_attempts(use_async):
    """A batch sent while the worker loads was refused after `attempts` + 1 `Loading` answers (11 s)."""
    left = [5]

    def script(method: str, path: str) -> bytes:
        if left[0] > 0:
            left[0] -= 1
            return LOADING
        return ndjson(START, OK0, OK1, DONE)

    async with RogueWorker(script) as rogue:
        result = await stream(rogue.base, use_async)
    assert result["ok_count"] == 2 and rogue.requests == [("POST", "/synth_batch")] * 6


def loading_until(date: str) -> bytes:
    """A `Loading` 503 whose Retry-After is an HTTP date, with the answer's own `Date` one second before."""
    answered = email.utils.formatdate(0, usegmt=True)  # the worker's clock, not the client's
    return reply(
        503,
        b'{"status": "fail", "error": "Loading: the engine is still loading"}',
        headers=f"Date: {answered}\r\nRetry-After: {date}\r\n",
    )


@both
async def test_a_retry_after_written_as_a_date_is_waited_for_as_asked(use_async):
    """RFC 9110 allows `Retry-After: <HTTP date>` (a proxy in front of the worker may write one): it was
    read as no Retry-After, so each answer spent an attempt (here 2) and the batch was refused. Now the
    wait is the date less the answer's `Date` (its clock may be far from ours: here 1970)."""
    answers = [loading_until(email.utils.formatdate(1, usegmt=True))]
    answers += [loading_until(email.utils.formatdate(0, usegmt=True))] * 3  # now: the least wait
    answers.append(ndjson(START, OK0, OK1, DONE))
    events: list[dict[str, Any]] = []
    async with RogueWorker(lambda method, path: answers.pop(0)) as rogue:
        result = await stream(rogue.base, use_async, on_progress=lambda idx, event: events.append(event))
    assert result["ok_count"] == 2 and answers == []
    waits = [event["retry_after"] for event in events if event["event"] == "waiting"]
    assert waits == [1.0, 0.05, 0.05, 0.05]


@both
async def test_a_re_attached_stream_may_be_as_quiet_as_the_read_timeout(use_async):
    """Only a re-attach's answer is awaited `answer_timeout`; its lines then come as far apart as the
    read timeout allows. The sync client kept the answer timeout for the lines too (http.client drops
    the connection's socket once the answer says `Connection: close`, so the read timeout was never
    set): 10 s, the worker's heartbeat interval, so a re-attached stream was dropped as its heartbeat
    came, each time, and the batch given up after 11 such quiet gaps (a section over 10 s, a load)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"

    async def quiet() -> AsyncIterator[bytes]:
        yield head
        for event in (OK0, OK1, DONE):
            await asyncio.sleep(0.3)  # quieter than the answer timeout, well within the read timeout
            yield json.dumps(event).encode() + b"\n"

    script = lambda method, path: ndjson(START) if method == "POST" else quiet()  # noqa: E731
    async with RogueWorker(script) as rogue:
        options = {"answer_timeout": 0.1, "read_timeout": seconds(10), "reattach_attempts": 0}
        result = await stream(rogue.base, use_async, **options)
    assert result["ok_count"] == 2 and rogue.requests == [
        ("POST", "/synth_batch"),
        ("GET", "/jobs/j1/events?after=1"),
    ]
