"""The pipeline client (sync and async) against a worker that breaks the protocol, on a real socket: it
reports a ClientError in words, re-attaches where the log's `seq` allows, reads nothing without a
bound, and never loses or doubles a section's result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from npu_worker import client
from npu_worker.client import WorkerProtocolError, aio
from npu_worker.client.common import BODY_LIMIT, LINE_LIMIT
from npu_worker.client.errors import AnswerCut
from tests.rogue_worker import RogueWorker, ndjson, reply
from tests.timing import seconds

START = {"event": "start", "job_id": "j1", "total": 2, "seq": 1}
OK0 = {"event": "progress", "idx": 0, "status": "ok", "wav_path": "/w/s00.wav", "seq": 2}
OK1 = {"event": "progress", "idx": 1, "status": "ok", "wav_path": "/w/s01.wav", "seq": 3}
DONE = {"event": "done", "total": 2, "ok_count": 2, "fail_count": 0, "cancelled": False, "seq": 4}
SECTIONS = [{"idx": 0, "text": "a"}, {"idx": 1, "text": "b"}]


async def stream(base: str, use_async: bool, **options: Any) -> dict[str, Any]:
    options = {"base": base, "reattach_attempts": 2, "reattach_delay": 0.01, **options}
    async with asyncio.timeout(seconds(10)):
        if use_async:
            return await aio.synth_batch_streaming(SECTIONS, **options)
        return await asyncio.to_thread(client.synth_batch_streaming, SECTIONS, **options)


both = pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])


async def endless_line(method: str, path: str) -> AsyncIterator[bytes]:
    """A stream whose second line never ends (at most 64 MiB, should the client read it all)."""
    yield ndjson(START)
    for _ in range(1024):
        yield b"x" * 65536


@both
async def test_a_line_that_never_ends_is_refused_after_a_bounded_read(use_async):
    async with RogueWorker(endless_line) as rogue:
        with pytest.raises(WorkerProtocolError, match=f"a line over {LINE_LIMIT} bytes"):
            await stream(rogue.base, use_async)
    assert rogue.requests == [("POST", "/synth_batch")], "the same log would be sent again: not re-attached"
    assert rogue.sent < 16 << 20


@both
@pytest.mark.parametrize(
    "line",
    [b"{not json\n", b"[" * 50_000 + b"\n", b"\xff\xfe\n"],
    ids=["not-json", "nested-too-deeply", "not-utf8"],
)
async def test_a_line_that_is_not_json_is_a_protocol_error_at_once(use_async, line: bytes):
    async with RogueWorker(lambda method, path: ndjson(START, line, OK0, OK1, DONE)) as rogue:
        with pytest.raises(WorkerProtocolError, match="a line that is not JSON"):
            await stream(rogue.base, use_async)
    assert len(rogue.requests) == 1


@both
@pytest.mark.parametrize("idx", [None, "0", [0], True], ids=["missing", "string", "list", "bool"])
async def test_an_ok_without_an_integer_idx_is_a_protocol_error(use_async, idx: Any):
    ok = {key: value for key, value in OK0.items() if key != "idx"}
    if idx is not None:
        ok["idx"] = idx
    async with RogueWorker(lambda method, path: ndjson(START, ok, OK1, DONE)) as rogue:
        with pytest.raises(WorkerProtocolError, match="ok without an integer idx"):
            await stream(rogue.base, use_async)


@both
@pytest.mark.parametrize("job_id", [None, 5, {"id": 1}, ""], ids=["missing", "number", "object", "empty"])
async def test_a_start_without_a_job_id_is_a_protocol_error(use_async, job_id: Any):
    """A number or an object there was a TypeError out of `quote` once the stream needed re-attaching."""
    start = {key: value for key, value in START.items() if key != "job_id"}
    if job_id is not None:
        start["job_id"] = job_id
    async with RogueWorker(lambda method, path: ndjson(start, OK0)) as rogue:
        with pytest.raises(WorkerProtocolError, match="a start without a job_id"):
            await stream(rogue.base, use_async)


@both
@pytest.mark.parametrize(
    ("line", "said"),
    [
        ({"status": "ok"}, "a line that is no event"),
        ({"event": "progress", "idx": 0, "status": "synth"}, "a progress event without its seq"),
        ({"event": "progress", "idx": 0, "status": "synth", "seq": True}, "a progress event without its seq"),
    ],
    ids=["no-event-name", "no-seq", "bool-seq"],
)
async def test_a_re_attached_line_without_its_seq_is_a_protocol_error_not_a_loop(use_async, line, said):
    """Numbered by arrival, each such line was progress: a worker that answered every re-attach with one
    and hung up was asked again at once, without a pause and for ever (4 139 requests in 3 s)."""
    script = lambda method, path: ndjson(START) if method == "POST" else ndjson(line)  # noqa: E731
    async with RogueWorker(script) as rogue:
        with pytest.raises(WorkerProtocolError, match=said):
            await stream(rogue.base, use_async)
    assert rogue.requests == [("POST", "/synth_batch"), ("GET", "/jobs/j1/events?after=1")]


def gapped(method: str, path: str) -> bytes:
    """The first stream loses seq 3 (section 1's ok); re-attached after 2, the log is whole."""
    if path == "/synth_batch":
        return ndjson(START, OK0, DONE)
    assert path == "/jobs/j1/events?after=2", path
    return ndjson(OK1, DONE)


@both
async def test_a_stream_that_skips_a_seq_is_re_attached_after_the_last_one_seen(use_async):
    events: list[dict[str, Any]] = []
    async with RogueWorker(gapped) as rogue:
        result = await stream(rogue.base, use_async, on_progress=lambda idx, event: events.append(event))
    assert [event["seq"] for event in events] == [1, 2, 3, 4]  # no `stream_lost` unless asked for
    assert result["wav_paths"] == ["/w/s00.wav", "/w/s01.wav"]
    assert rogue.requests == [("POST", "/synth_batch"), ("GET", "/jobs/j1/events?after=2")]


@both
async def test_a_skip_the_log_itself_has_is_taken_after_one_re_attach(use_async):
    """A Redis log with an entry planted at a high id moves seq on past it: asked again, the log skips
    in the same place, and the client goes on rather than re-attaching until it gives up."""
    skipping = (START, OK0, OK1 | {"seq": 999}, DONE | {"seq": 1000})
    async with RogueWorker(lambda method, path: ndjson(*skipping)) as rogue:
        result = await stream(rogue.base, use_async)
    assert result["ok_count"] == 2 and result["done"]["seq"] == 1000
    assert rogue.requests[1:] == [("GET", "/jobs/j1/events?after=2")]


@both
async def test_replayed_and_out_of_order_lines_are_taken_once_in_log_order(use_async):
    """A replay (seq 2 twice) is dropped; seq 3 before 2 is a gap, so the rest comes by re-attaching."""

    def script(method: str, path: str) -> bytes:
        if path == "/synth_batch":
            return ndjson(START, OK0, OK0, START, OK1 | {"seq": 4}, OK1)
        return ndjson(OK1, DONE)

    events: list[dict[str, Any]] = []
    async with RogueWorker(script) as rogue:
        result = await stream(rogue.base, use_async, on_progress=lambda idx, event: events.append(event))
    assert [event["seq"] for event in events] == [1, 2, 3, 4]
    assert [s["idx"] for s in result["sections"]] == [0, 1] and result["ok_count"] == 2


@both
async def test_a_refusal_whose_body_is_cut_short_is_still_the_refusal(use_async):
    """urllib's IncompleteRead escaped the sync client as it was (not a ClientError); a 503 is "not now",
    so the submission is sent again, as for a whole body (after the back-off: it says no Retry-After)."""
    cut = reply(503, b'{"status": "fail"', length=400)
    async with RogueWorker(lambda method, path: cut) as rogue:
        with pytest.raises(client.WorkerHTTPError) as refused:
            await stream(rogue.base, use_async)
        assert refused.value.status == 503 and len(rogue.requests) == 3
        with pytest.raises(client.WorkerHTTPError):
            async with asyncio.timeout(seconds(10)):
                await asyncio.to_thread(client.health, base=rogue.base)


@both
async def test_a_huge_refusal_body_is_read_only_in_part(use_async):
    huge = reply(400, b'{"status": "fail", "error": "BadRequest: ' + b"x" * (8 << 20) + b'"}')
    async with RogueWorker(lambda method, path: huge) as rogue:
        with pytest.raises(client.WorkerHTTPError) as refused:
            await stream(rogue.base, use_async)
    assert refused.value.status == 400 and len(str(refused.value)) < 1000


async def health_of(base: str, use_async: bool) -> dict[str, Any]:
    async with asyncio.timeout(seconds(20)):
        if use_async:
            return await aio.health(base=base)
        return await asyncio.to_thread(client.health, base=base)


@both
async def test_an_answer_nested_too_deeply_is_a_body_that_is_not_json(use_async):
    """json's RecursionError escaped both clients (not a ClientError)."""
    deep = reply(200, b"[" * 50_000)
    async with RogueWorker(lambda method, path: deep) as rogue:
        with pytest.raises(WorkerProtocolError, match=r"HTTP 200 with a body that is no JSON object"):
            await health_of(rogue.base, use_async)


async def endless_body(method: str, path: str) -> AsyncIterator[bytes]:
    """A 200 whose body ends with the connection, which stays open (at most 80 MiB)."""
    yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
    for _ in range(80):
        yield b" " * (1 << 20)


@both
async def test_an_answer_that_never_ends_is_refused_after_a_bounded_read(use_async):
    async with RogueWorker(endless_body) as rogue:
        with pytest.raises(WorkerProtocolError, match=f"answer is over {BODY_LIMIT} bytes"):
            await health_of(rogue.base, use_async)


async def poll(base: str, use_async: bool, **options: Any) -> dict[str, Any]:
    options = {"base": base, "poll_interval": 0.01, "reattach_attempts": 2, "reattach_delay": 0.01, **options}
    async with asyncio.timeout(seconds(10)):
        if use_async:
            return await aio.synth_batch_polling(SECTIONS, **options)
        return await asyncio.to_thread(client.synth_batch_polling, SECTIONS, **options)


def polled(status: bytes, results: list[bytes]) -> Any:
    """POST accepts job j1; its status answers `status`; its result each of `results` in turn."""

    def script(method: str, path: str) -> bytes:
        if method == "POST":
            return reply(200, b'{"job_id": "j1", "status": "queued", "total": 2}')
        return status if path.endswith("/status") else results.pop(0)

    return script


@both
async def test_a_status_that_is_no_status_of_the_job_is_a_protocol_error(use_async):
    """A proxy's 200 page for /status read as a job still under way: the client polled it for ever."""
    async with RogueWorker(polled(reply(200, b"<html>gateway</html>"), [])) as rogue:
        with pytest.raises(WorkerProtocolError, match="HTTP 200 with a body that is no JSON object"):
            await poll(rogue.base, use_async)
    assert len(rogue.requests) == 2  # the submission and one poll: the same page would come again


@both
async def test_a_result_not_there_yet_is_polled_again(use_async):
    """/result's 202 (its status body) was taken for the result: the job's sections were lost."""
    done = b'{"job_id": "j1", "status": "done", "done": 2, "total": 2}'
    ok = [dict(OK0, event="progress"), dict(OK1, event="progress")]
    result = json.dumps({"job_id": "j1", "status": "done", "total": 2, "sections": ok}).encode()
    running = reply(202, b'{"job_id": "j1", "status": "running", "done": 1, "total": 2}')
    async with RogueWorker(polled(reply(200, done), [running, reply(200, result)])) as rogue:
        answer = await poll(rogue.base, use_async)
    assert answer["wav_paths"] == ["/w/s00.wav", "/w/s01.wav"]


@both
@pytest.mark.parametrize("code", [301, 302, 307, 308])
async def test_a_redirect_is_the_workers_answer_not_followed(use_async, code: int):
    """urllib followed it to any host with the bearer token (and a POST became a GET)."""
    async with RogueWorker(lambda method, path: reply(200, b"{}")) as elsewhere:
        where = f"Location: {elsewhere.base.replace('127.0.0.1', 'localhost')}/steal\r\n"
        async with RogueWorker(lambda method, path: reply(code, b"", headers=where)) as rogue:
            with pytest.raises(client.WorkerHTTPError) as refused:
                await stream(rogue.base, use_async, token="s3cret")
            assert refused.value.status == code
            with pytest.raises(client.WorkerHTTPError):
                await health_of(rogue.base, use_async)
    assert elsewhere.requests == []


@both
async def test_an_answer_cut_short_of_its_content_length_is_polled_again(use_async):
    """A proxy that closes mid-body: the sync client read the first bytes of /result as the whole answer
    (http.client hands a body cut short of its Content-Length back without a word) and gave the batch
    up at once, `HTTP 200 with a body that is no JSON object`; aiohttp's reader raised, and it polled
    again. Both now poll again, as after any broken connection."""
    done = b'{"job_id": "j1", "status": "done", "done": 2, "total": 2}'
    ok = [dict(OK0, event="progress"), dict(OK1, event="progress")]
    result = json.dumps({"job_id": "j1", "status": "done", "total": 2, "sections": ok}).encode()
    cut = reply(200, result[:20], length=len(result))
    async with RogueWorker(polled(reply(200, done), [cut, reply(200, result)])) as rogue:
        answer = await poll(rogue.base, use_async)
    assert answer["wav_paths"] == ["/w/s00.wav", "/w/s01.wav"]


@both
@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nContent-Type: appl",
        b"HTTP/1.1 200",
        # a whole header line that frames the body, then the close: the sync client said
        # `IncompleteRead(0 bytes read)` and `… ended 5 bytes short of its Content-Length`
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n",
    ],
)
async def test_an_answer_cut_inside_its_head_is_said_alike_by_both_clients(use_async, head, tmp_path):
    """A head cut before its blank line: the async client's AnswerCut quoted aiohttp's repr of the head it
    had parsed (`ServerDisconnectedError(<RawResponseMessage(version=…, headers=…)>)`), where the sync
    client says what happened; both now say `the answer broke off in its head`, whatever the head said
    of the body's framing (the sync client read a body after it first)."""
    out = str(tmp_path / "a.wav")
    async with RogueWorker(lambda method, path: head) as rogue, asyncio.timeout(seconds(10)):
        with pytest.raises(AnswerCut) as cut:
            if use_async:
                await aio.synth("가나다.", out, base=rogue.base, timeout=seconds(5))
            else:
                await asyncio.to_thread(client.synth, "가나다.", out, base=rogue.base, timeout=seconds(5))
    assert str(cut.value).startswith(f"POST {rogue.base}/synth: the answer broke off in its head"), cut.value


@both
@pytest.mark.parametrize(
    "head", [b"HTTP/1.1 200 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\n\n"]
)
async def test_a_whole_head_and_no_body_is_said_alike_by_both_clients(use_async, head, tmp_path):
    """A whole head (its blank line came), then the close: a close-delimited body of no bytes. The sync
    client called it `AnswerCut` (http.client reads a head cut short as whole, so it took both for a
    cut); the async one `WorkerProtocolError`. Both now say it is no JSON object; a head cut before its
    blank line is still `AnswerCut` in both (above)."""
    out = str(tmp_path / "a.wav")
    async with RogueWorker(lambda method, path: head) as rogue, asyncio.timeout(seconds(10)):
        with pytest.raises(WorkerProtocolError, match="HTTP 200 with a body that is no JSON object"):
            if use_async:
                await aio.synth("가나다.", out, base=rogue.base, timeout=seconds(5))
            else:
                await asyncio.to_thread(client.synth, "가나다.", out, base=rogue.base, timeout=seconds(5))
