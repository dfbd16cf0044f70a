"""The pipeline client's bounds in time (sync and async), against a worker on a real socket that answers,
but too slowly to be served: an answer's head, a line or a body trickled a byte at a time is cut at the
call's timeout as a whole (the socket's timeout bounds each read only), the time the answers take counts
against `wait_limit`, a poll given up says what it tried and for how long, and timeouts and intervals
no run can keep are refused before anything is sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from npu_worker import client
from npu_worker.client import aio
from tests.rogue_worker import RogueWorker, reply
from tests.timing import seconds

START_LINE = json.dumps({"event": "start", "job_id": "j1", "total": 2, "seq": 1}).encode() + b"\n"
SECTIONS = [{"idx": 0, "text": "a"}, {"idx": 1, "text": "b"}]
NDJSON_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"
HEALTHY = reply(200, b'{"status": "ok"}')
ACCEPTED = reply(200, b'{"job_id": "j1", "status": "queued", "total": 2}')
both = pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])


async def run(call: str, base: str, use_async: bool, **options: Any) -> dict[str, Any]:
    """`synth_batch_streaming` or `synth_batch_polling`, given up by the test after 10 s."""
    options = {"base": base, "reattach_attempts": 0, "reattach_delay": 0.01, **options}
    async with asyncio.timeout(seconds(10)):
        if use_async:
            return await getattr(aio, call)(SECTIONS, **options)
        return await asyncio.to_thread(getattr(client, call), SECTIONS, **options)


async def trickled(head: bytes, byte: bytes = b" ") -> AsyncIterator[bytes]:
    """`head`, then `byte` each 50 ms, never a line's end (at most 20 s of it)."""
    yield head
    for _ in range(400):
        await asyncio.sleep(0.05)
        yield byte


@both
async def test_a_line_trickled_a_byte_at_a_time_is_cut_at_the_read_timeout(use_async):
    """Each byte came well within the read timeout, so no read ever timed out, and a line that never
    ended held the client (sync and aio) for as long as the peer liked. A whole line must now come
    within `read_timeout`: the stream is then re-attached as after a silence, and given up."""

    def script(method: str, path: str) -> Any:
        if path == "/health":  # asked after a silence: a restart's sign
            return HEALTHY
        return trickled(NDJSON_HEAD + (START_LINE if method == "POST" else b""))

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.TransportError, match=r"no whole line within 0.5 s \(read_timeout\)"):
            await run("synth_batch_streaming", rogue.base, use_async, read_timeout=0.5)
    assert rogue.requests == [
        ("POST", "/synth_batch"),
        ("GET", "/health"),
        ("GET", "/jobs/j1/events?after=1"),
    ]


@both
async def test_an_answer_trickled_a_byte_at_a_time_is_cut_at_the_read_timeout(use_async):
    """A poll's answer announcing 400 bytes and sending one each 50 ms held the client for 20 s a poll."""

    def script(method: str, path: str) -> Any:
        if method == "POST":
            return ACCEPTED
        return trickled(reply(200, b"", length=400))

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.TransportError, match="no whole answer within 0.5 s"):
            await run("synth_batch_polling", rogue.base, use_async, timeout=0.5)
    assert rogue.requests == [("POST", "/synth_batch?async=1"), ("GET", "/jobs/j1/status")]


LOADING = reply(503, b'{"status": "fail", "error": "Loading: the engine"}', headers="Retry-After: 0.05\r\n")


async def slowly(answer: bytes) -> AsyncIterator[bytes]:
    await asyncio.sleep(0.2)
    yield answer


@both
async def test_the_wait_limit_counts_the_time_the_answers_took(use_async):
    """`wait_limit` counted the sleeps only: a worker that took 0.2 s to say `Loading` and asked for 0.05 s
    was asked 12 times for a limit of 0.5 s (0.5 s of sleeps, 2.4 s of answers); a proxy that held each answer for its own
    timeout stretched a 900 s limit without bound. The limit is now the time since the first "not now"."""
    async with RogueWorker(lambda method, path: slowly(LOADING)) as rogue:
        with pytest.raises(client.WorkerHTTPError, match="HTTP 503: Loading: the engine"):
            await run("synth_batch_streaming", rogue.base, use_async, wait_limit=0.5)
    assert 2 <= len(rogue.requests) <= 5, rogue.requests  # 0.5 s: a first answer, then 2 or 3 more


@both
async def test_polling_given_up_says_what_it_tried_and_for_how_long(use_async):
    """A poll given up showed the worker's (or a proxy's) last words only, `HTTP 502: <html>...`: not
    which request, how often, or for how long."""

    def script(method: str, path: str) -> bytes:
        return ACCEPTED if method == "POST" else reply(502, b"<html>Bad Gateway</html>")

    async with RogueWorker(script) as rogue:
        with pytest.raises(client.WorkerHTTPError) as lost:
            await run("synth_batch_polling", rogue.base, use_async, reattach_attempts=2)
    said = str(lost.value)
    assert said.startswith("GET /jobs/j1/status: given up after 3 tries in ") and lost.value.status == 502
    assert said.endswith("s; the last answer: HTTP 502: <html>Bad Gateway</html>"), said
    assert len(rogue.requests) == 1 + 3


@both
async def test_a_refusal_trickled_a_byte_at_a_time_is_cut_at_the_read_timeout(use_async):
    """A refusal's body (up to 64 KiB of it is read, for its `error`) at a byte each 50 ms held the
    client for as long as the peer kept trickling, the stream's line deadline notwithstanding."""
    async with RogueWorker(lambda method, path: trickled(reply(503, b"", length=400))) as rogue:
        with pytest.raises(client.TransportError, match="no whole answer within 0.5 s"):
            await run("synth_batch_streaming", rogue.base, use_async, read_timeout=0.5)
    assert rogue.requests == [("POST", "/synth_batch")]


@both
async def test_an_answer_head_trickled_a_byte_at_a_time_is_cut_at_the_read_timeout(use_async):
    """The status line, then a header's name that never ends, a byte each 50 ms: no read of the head
    timed out, so a submission (or a `synth`, whose head is awaited its whole `timeout`) waited for as
    long as the peer kept trickling."""
    async with RogueWorker(lambda method, path: trickled(b"HTTP/1.1 200 OK\r\n", b"x")) as rogue:
        with pytest.raises(client.TransportError, match="no whole answer within 0.5 s"):
            await run("synth_batch_streaming", rogue.base, use_async, read_timeout=0.5)
    assert rogue.requests == [("POST", "/synth_batch")]


@both
@pytest.mark.parametrize(
    ("call", "option", "problem"),
    [
        (
            "synth_batch_polling",
            {"poll_interval": -1},
            "poll_interval must be a finite number of seconds ≥ 0",
        ),
        ("synth_batch_polling", {"poll_interval": float("nan")}, "poll_interval must be a finite number"),
        ("synth_batch_polling", {"timeout": 0}, "timeout must be a finite number of seconds > 0, not 0"),
        (
            "synth_batch_streaming",
            {"read_timeout": -1},
            "read_timeout must be a finite number of seconds > 0",
        ),
        ("synth_batch_streaming", {"read_timeout": float("nan")}, "read_timeout must be a finite number"),
        ("synth_batch_streaming", {"answer_timeout": float("nan")}, "answer_timeout must be a finite number"),
        (
            "synth_batch_streaming",
            {"reattach_delay": -1},
            "reattach_delay must be a finite number of seconds ≥ 0",
        ),
        ("synth_batch_polling", {"poll_interval": 1e10}, "poll_interval must be at most a year"),
        ("synth_batch_streaming", {"read_timeout": 1e10}, "read_timeout must be at most a year"),
        ("synth_batch_streaming", {"reattach_attempts": -1}, "reattach_attempts must be a whole number ≥ 0"),
        ("synth_batch_streaming", {"reattach_attempts": 1.5}, "reattach_attempts must be a whole number ≥ 0"),
    ],
)
async def test_options_no_run_can_keep_are_refused_before_anything_is_sent(use_async, call, option, problem):
    """A negative or nan `poll_interval` was a ValueError from time.sleep (the async client polled back
    to back) once the batch was queued: its job ran on, unnamed, and a retry made it twice. A bad
    timeout was a ValueError from the socket, or `[Errno 115] Operation now in progress` for 0. Over a
    year (1e10 s: "no limit"), the sync client's socket and time.sleep raised OverflowError, no
    ClientError, the poll's once the batch was queued."""
    async with RogueWorker(lambda method, path: ACCEPTED) as rogue:
        with pytest.raises(client.InvalidArgument, match=problem.replace("(", r"\(")):
            await run(call, rogue.base, use_async, **option)
    assert rogue.requests == []


@both
async def test_health_takes_a_timeout_in_both_clients(use_async):
    """The async `health` had no `timeout` (always 10 s), the sync one did: a caller's liveness probe
    against a hung worker could not be made shorter."""
    released = asyncio.Event()

    async def silent() -> AsyncIterator[bytes]:
        await released.wait()
        yield b""

    async with RogueWorker(lambda method, path: silent()) as rogue:
        try:
            with pytest.raises(client.TransportError):
                async with asyncio.timeout(seconds(5)):
                    if use_async:
                        await aio.health(base=rogue.base, timeout=0.2)
                    else:
                        await asyncio.to_thread(client.health, base=rogue.base, timeout=0.2)
        finally:
            released.set()


@both
@pytest.mark.parametrize("answer", ["trickled", "cut"])
async def test_a_polling_submission_answered_then_broken_off_says_the_batch_may_be_queued(use_async, answer):
    """The worker queues a batch before it answers `?async=1`: an answer begun and then broken off (a
    proxy that stalls or closes mid-body) was a bare "no whole answer", where the stream's says the
    batch may be queued; `batch --poll` run again then made the lecture twice. Sent once, said so."""
    head = reply(200, b"", length=400)

    def broken(method: str, path: str) -> Any:
        return trickled(head) if answer == "trickled" else head + b'{"job_id": "j'

    async with RogueWorker(broken) as rogue:
        with pytest.raises(client.TransportError, match="it may have queued the batch: GET /jobs lists it"):
            await run("synth_batch_polling", rogue.base, use_async, timeout=0.5, reattach_attempts=2)
    assert rogue.requests == [("POST", "/synth_batch?async=1")]


async def silent(method: str, path: str) -> AsyncIterator[bytes]:
    """No answer at all (a proxy holding it): nothing for 20 s, then the connection closed."""
    await asyncio.sleep(20)
    yield b""


@both
@pytest.mark.parametrize("call", ["synth_batch_polling", "synth_batch_streaming"])
@pytest.mark.parametrize("answer", ["silent", "closed"])
async def test_a_submission_sent_and_never_answered_says_the_batch_may_be_queued(use_async, call, answer):
    """The worker queues a batch before it answers, and a proxy may hold or drop that answer: sent whole,
    with no answer begun within the timeout or the connection closed without one, a submission was a
    bare "no whole answer" or "Remote end closed connection without response" (sync), or "Server
    disconnected" (aio); `batch` run again made the lecture twice. Sent once, said so."""
    script = silent if answer == "silent" else (lambda method, path: b"")
    timeouts = {"synth_batch_polling": "timeout", "synth_batch_streaming": "read_timeout"}
    async with RogueWorker(script) as rogue:
        with pytest.raises(
            client.TransportError, match="it may have queued the batch: GET /jobs lists it"
        ) as raised:
            await run(call, rogue.base, use_async, reattach_attempts=2, **{timeouts[call]: 0.5})
    assert "the worker answered" not in str(raised.value)  # it never did
    assert len(rogue.requests) == 1 and rogue.requests[0][0] == "POST"
