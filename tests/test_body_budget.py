"""One bound on the request-body bytes the whole worker holds at once (npu_worker/body_budget.py):
bodies held open by hostile callers, each under --max-body-bytes, no longer add up without limit, and
a lecture batch sent at once still goes through while they hold the budget."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tracemalloc
from pathlib import Path

import aiohttp
import pytest
import websockets
from aiohttp.streams import StreamReader

from npu_worker import body_budget, server
from npu_worker.app_keys import BODY_BUDGET_KEY
from npu_worker.body_budget import BodyBudget
from npu_worker.config import add_settings_arguments, load_settings
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"  # shipped copy
KIB = 1024


def lecture_batch() -> bytes:
    """The 39-slide lecture, each slide's text repeated to near --max-text-chars: about 320 KiB of
    JSON (ASCII-escaped, as `json.dumps` writes it), the size of a real batch with long slides."""
    lecture = json.loads(LECTURE.read_text(encoding="utf-8"))
    for section in lecture["sections"]:
        text = section["text"]
        section["text"] = (text + " ") * (1900 // (len(text) + 1))
    return json.dumps(lecture).encode()


async def held_open(port: int, declared: int, sent: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A hostile caller: a POST /synth_batch that declares `declared` bytes, sends `sent` at once and
    then nothing more, holding its body open."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        f"POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    )
    writer.write(head.encode() + b" " * sent)
    await writer.drain()
    return reader, writer


async def answer_of(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str], dict]:
    """The status line, headers and JSON body of the one answer the server sends, then closes."""
    async with asyncio.timeout(seconds(10)):
        raw = await reader.read()
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return status.encode(), headers, json.loads(body)


@pytest.fixture
def quick_drops(monkeypatch):
    """A body may be dropped for another once it has arrived for 0.3 s (1 s in production)."""
    monkeypatch.setattr(body_budget, "SLOW_BODY_SECONDS", 0.3)


async def test_bodies_held_open_are_bounded_together_and_a_lecture_batch_still_goes_through(
    served, quick_drops, caplog
):
    """Before: every connection held its body (up to --max-body-bytes) for --body-timeout, whatever the
    others held: 512 × 8 MiB. Now the bodies together stay within the budget; a new one finds room by
    dropping the one arriving longest (a 503 that closes its connection), and one that finds none is a
    503 BodyBudgetFull with Retry-After."""
    listener = await served(body_budget_bytes=2048 * KIB)
    holders = [await held_open(listener.port, 4096 * KIB, 600 * KIB) for _ in range(3)]
    try:
        await bounded_together(listener, holders)
    finally:
        for _, writer in holders:
            writer.transport.abort()
    assert "Traceback" not in caplog.text and "Unhandled exception" not in caplog.text, caplog.text


async def bounded_together(listener, holders) -> None:
    budget = listener.runner.app[BODY_BUDGET_KEY]
    await until(lambda: budget.held >= 3 * 600 * KIB - 64 * KIB, "three bodies to be held")

    # A fourth, while the three are young: no room, nothing to drop. Refused, its connection closed.
    reader, writer = await held_open(listener.port, 4096 * KIB, 600 * KIB)
    status, headers, body = await answer_of(reader)
    writer.close()
    assert status.startswith(b"HTTP/1.1 503 ")
    assert headers["retry-after"] == "1"
    assert body["error"].startswith("BodyBudgetFull: ")
    assert budget.held <= budget.total

    # The lecture, sent at once once they are old: the oldest held body makes room for it.
    await asyncio.sleep(0.4)
    batch = lecture_batch()
    assert len(batch) > 300 * KIB
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
        async with session.post(url, data=batch, headers={"Content-Type": "application/json"}) as answer:
            assert answer.status == 200, await answer.text()
            assert (await answer.json())["total"] == 39
    status, headers, body = await answer_of(holders[0][0])
    assert status.startswith(b"HTTP/1.1 503 ") and body["error"].startswith("BodyBudgetFull: ")
    assert budget.dropped == 1
    async with aiohttp.ClientSession() as session:  # an operator sees it
        async with session.get(f"http://127.0.0.1:{listener.port}/metrics") as answer:
            metrics = await answer.text()
    assert 'npu_worker_bodies_over_budget_total{outcome="dropped"} 1.0' in metrics
    assert 'npu_worker_bodies_over_budget_total{outcome="refused"} 1.0' in metrics
    held = next(line for line in metrics.splitlines() if line.startswith("npu_worker_body_bytes_held "))
    assert float(held.split()[1]) == budget.held, held
    for _, writer in holders:
        writer.transport.abort()
    await until(lambda: budget.held == 0, "every held body to be let go")


async def test_a_body_read_whole_or_refused_leaves_nothing_held(served):
    """A body's bytes leave the budget when it is read, refused for its size, or cut short."""
    listener = await served(body_budget_bytes=1024 * KIB, max_body_bytes=512 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
        async with session.post(url, data=b'{"sections": "x"}') as answer:
            assert answer.status == 400
        async with session.post(url, data=b" " * (600 * KIB), chunked=True) as answer:
            assert answer.status == 413
    reader, writer = await held_open(listener.port, 300 * KIB, 200 * KIB)
    await until(lambda: budget.held > 0, "the body to be held")
    writer.transport.abort()  # the caller leaves mid-body
    await until(lambda: budget.held == 0, "the cut body to be let go")
    assert budget.refused == 0 and budget.dropped == 0


async def fragments_then_silence(first: int):
    """A WebSocket text message that starts with `first` characters and never ends."""
    yield "x" * first
    await asyncio.Event().wait()


@pytest.mark.parametrize("path", ["/ws", "/v1/audio/speech/stream"])
async def test_an_unfinished_websocket_message_is_held_and_dropped_for_a_new_body(served, quick_drops, path):
    """aiohttp keeps a message's frames until the last is in: what has arrived of one counts against
    the budget, and the socket holding it is dropped to make room for a body sent at once."""
    listener = await served(body_budget_bytes=1024 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    ws = await websockets.connect(f"ws://127.0.0.1:{listener.port}{path}", max_size=None)
    sending = asyncio.create_task(ws.send(fragments_then_silence(800 * KIB)))
    try:
        await until(lambda: budget.held >= 600 * KIB, "the unfinished message to be held")
        await asyncio.sleep(0.4)
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, data=lecture_batch()) as answer:
                assert answer.status == 200, await answer.text()
        await until(lambda: not listener.guard.open, "the socket to be dropped")
        assert budget.dropped == 1
        await until(lambda: budget.held == 0, "the socket's bytes to be let go")
    finally:
        sending.cancel()
        ws.transport.abort()


async def test_a_websocket_message_that_finds_no_room_loses_its_connection(served):
    listener = await served(body_budget_bytes=256 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    ws = await websockets.connect(f"ws://127.0.0.1:{listener.port}/ws", max_size=None)
    sending = asyncio.create_task(ws.send(fragments_then_silence(1024 * KIB)))
    try:
        await until(lambda: not listener.guard.open, "the connection to be dropped")
        assert budget.refused >= 1 and budget.held == 0
    finally:
        sending.cancel()
        ws.transport.abort()


def test_room_is_made_by_dropping_the_oldest_slow_bodies_never_the_one_growing(monkeypatch):
    monkeypatch.setattr(body_budget, "SLOW_BODY_SECONDS", 0.0)
    budget = BodyBudget(100)
    dropped: list[str] = []
    first = budget.hold(lambda error: dropped.append("first"))
    second = budget.hold(lambda error: dropped.append("second"))
    first.grow(40)
    second.grow(40)
    second.grow(20)  # fits exactly: nothing dropped
    assert dropped == [] and budget.held == 100
    second.grow(30)  # the first, older, is dropped; the growing one never is for itself
    assert dropped == ["first"] and budget.held == 90 and first.size == 0
    with pytest.raises(Exception, match="BodyBudgetFull"):
        first.grow(1)  # a dropped body grows no more
    with pytest.raises(Exception, match="BodyBudgetFull"):
        second.grow(20)  # nothing else to drop
    assert budget.refused == 1 and budget.held == 90
    second.release()
    assert budget.held == 0


async def test_a_voice_upload_held_open_is_dropped_for_a_batch_in_openais_shape(served, quick_drops):
    """A voice upload is read part by part, and held in the same budget: trickled, it makes room for a
    batch sent at once, and its caller hears why in OpenAI's error body (an SDK retries a 503)."""
    listener = await served(body_budget_bytes=1024 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    part = b'--b\r\nContent-Disposition: form-data; name="audio_sample"; filename="v.wav"\r\n\r\n'
    head = (
        "POST /v1/audio/voices HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 4000000\r\n\r\n"
    )
    writer.write(head.encode() + part + b"\0" * (800 * KIB))
    try:
        await until(lambda: budget.held >= 700 * KIB, "the upload to be held")
        await asyncio.sleep(0.4)
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, data=lecture_batch()) as answer:
                assert answer.status == 200, await answer.text()
        status, headers, body = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 503 ") and headers["retry-after"] == "1"
        assert body["error"]["code"] == "BodyBudgetFull"
        await until(lambda: budget.held == 0, "the upload's bytes to be let go")
    finally:
        writer.transport.abort()


async def test_a_dropped_body_is_freed_at_once_not_at_the_next_collection(served, quick_drops):
    """The refusal aiohttp keeps on the body's stream (and raises again) holds the reading frame in its
    traceback: the bytes read so far stayed in that cycle until a full collection, so the budget let
    go of bytes the worker still held."""
    listener = await served(body_budget_bytes=2048 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    gc.disable()
    tracemalloc.start()
    reader, writer = await held_open(listener.port, 4096 * KIB, 0)
    try:
        before = tracemalloc.get_traced_memory()[0]
        writer.write(b" " * (1536 * KIB))
        await until(lambda: budget.held >= 1536 * KIB, "the body to be held")
        await asyncio.sleep(0.4)
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, data=b" " * (1024 * KIB)) as answer:
                assert answer.status == 400  # read whole (not JSON): the held body made room for it
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 503 ") and budget.dropped == 1 and budget.held == 0
        assert tracemalloc.get_traced_memory()[0] - before < 512 * KIB
    finally:
        writer.transport.abort()
        tracemalloc.stop()
        gc.enable()


async def test_a_speech_stream_paused_for_its_backlog_still_holds_what_arrives(served):
    """A speech-stream socket with 64 Ki characters waiting to be handled stops reading messages
    (`stream_ws.MAX_HELD_CHARS`); aiohttp reads the socket on, and an unfinished message grew
    meanwhile, counted by nothing: the budget let go while the socket was paused."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()  # the first sentence stays on the engine: the rest wait
    listener = await served(engine, body_budget_bytes=512 * KIB, max_queue=1)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    ws = await websockets.connect(f"ws://127.0.0.1:{listener.port}/v1/audio/speech/stream", max_size=None)
    sending: asyncio.Task | None = None
    try:
        sentences = " ".join(f"문장 {n}번입니다." for n in range(12))
        await ws.send(json.dumps({"type": "input.text", "text": sentences}))
        for _ in range(40):  # 40 × 1 900 characters: past the 64 Ki the socket holds unhandled
            await ws.send(json.dumps({"type": "input.text", "text": "가" * 1900}))
        await asyncio.sleep(0.3)
        sending = asyncio.create_task(ws.send(fragments_then_silence(1024 * KIB)))
        await until(lambda: not listener.guard.open, "the paused socket's growing message to be dropped")
        assert budget.refused >= 1 and budget.held == 0
    finally:
        gate.open()
        if sending is not None:
            sending.cancel()
        ws.transport.abort()


def test_a_budget_smaller_than_the_largest_body_stops_serve_at_start():
    """Such a body could never be read: a 503 with Retry-After, retried for ever."""
    parser = argparse.ArgumentParser()
    add_settings_arguments(parser)
    args = parser.parse_args(["--body-budget-bytes", "1048576", "--max-body-bytes", "2097152"])
    with pytest.raises(SystemExit, match=r"--body-budget-bytes 1048576 is less than .* \(5242880 bytes"):
        load_settings(args, environ={})
    with pytest.raises(SystemExit, match=r"NPU_WORKER_BODY_BUDGET_BYTES 4194304 is less"):
        load_settings(parser.parse_args([]), environ={"NPU_WORKER_BODY_BUDGET_BYTES": "4194304"})
    assert load_settings(parser.parse_args([]), environ={}).body_budget_bytes == 256 * 1024 * 1024


async def raw_answer(port: int, request: bytes) -> tuple[bytes, dict[str, str], dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    try:
        return await answer_of(reader)
    finally:
        writer.transport.abort()


@pytest.mark.parametrize(
    ("path", "shape"), [("/jobs/{job}/events", "v1"), ("/v1/models", "openai"), ("/jobs/{job}", "v1")]
)
async def test_a_body_on_a_route_that_reads_none_is_refused_not_buffered(served, path, shape):
    """Only POST routes read a body. Before, aiohttp buffered an unread one (over twice its 256 KiB read size
    a connection), outside the budget, for as long as the answer ran (a running job's events)."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()  # the job runs on: its events are followed
    listener = await served(engine)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, json={"sections": [{"idx": 0, "text": "안녕하세요"}]}) as answer:
                job = (await answer.json())["job_id"]
        method = "DELETE" if path == "/jobs/{job}" else "GET"
        target = path.format(job=job).encode()
        head = (
            method.encode()
            + b" "
            + target
            + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 600000\r\n\r\n"
        )
        status, _, body = await raw_answer(listener.port, head + b" " * 600_000)
        assert status.startswith(b"HTTP/1.1 400 ")
        error = body["error"]["message"] if shape == "openai" else body["error"]
        assert f"a {method} request takes no body" in error
        # an empty body is no body: a DELETE with Content-Length: 0 (some clients send it) is served
        empty = (
            b"DELETE " + f"/jobs/{job}".encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
        )
        status, _, body = await raw_answer(listener.port, empty + b"Connection: close\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 200 "), body
    finally:
        gate.open()


def unread_body_bytes() -> int:
    """What aiohttp's payload streams hold now, read by nobody yet (their private `_size`)."""
    # (type, not isinstance: a dead weak proxy among the objects raises on isinstance)
    return sum(stream._size for stream in gc.get_objects() if type(stream) is StreamReader)


async def test_a_body_pipelined_behind_a_long_answer_is_buffered_little(served):
    """A request pipelined behind a running job's events waits in aiohttp's parser with its body,
    which no handler reads and the budget cannot see: reading stops at twice aiohttp's read size (256
    KiB in aiohttp 3.14: over 512 KiB held by each such connection), now at twice 64 KiB."""
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()  # the job runs on: its events are followed
    listener = await served(engine)
    writers = []
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/synth_batch?async=1"
            async with session.post(url, json={"sections": [{"idx": 0, "text": "안녕하세요"}]}) as answer:
                job = (await answer.json())["job_id"]
        before = unread_body_bytes()
        for _ in range(4):
            _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(
                f"GET /jobs/{job}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                "POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8000000\r\n\r\n".encode()
                + b" " * 2_000_000
            )
            writers.append(writer)
        await asyncio.sleep(0.5)  # (what the kernel takes, the worker reads, up to its pause)
        # each: up to 128 KiB, and the piece that passed it (up to 256 KiB); before, 512 KiB at least
        assert unread_body_bytes() - before < 4 * 480 * KIB
    finally:
        gate.open()
        for writer in writers:
            writer.transport.abort()


@pytest.mark.parametrize(("path", "shape"), [("/synth_batch", "v1"), ("/v1/audio/voices", "openai")])
async def test_a_caller_waiting_for_100_continue_hears_of_a_spent_budget_before_it_sends(served, path, shape):
    """Before, it was told to go on, sent its body, and was refused part way through it."""
    listener = await served(body_budget_bytes=1024 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    _, holder = await held_open(listener.port, 4096 * KIB, 800 * KIB)  # young: not dropped for it
    try:
        await until(lambda: budget.held >= 700 * KIB, "the body to be held")
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {600 * KIB}\r\nExpect: 100-continue\r\n\r\n"
        )
        status, headers, body = await raw_answer(listener.port, head.encode())
        assert status.startswith(b"HTTP/1.1 503 ") and headers["retry-after"] == "1"
        name = body["error"]["code"] if shape == "openai" else body["error"].split(":")[0]
        assert name == "BodyBudgetFull"
        assert budget.refused == 1  # counted in /metrics as a body refused for want of room
        # with room, it is told to go on
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(head.replace(str(600 * KIB), str(100 * KIB)).encode())
        async with asyncio.timeout(seconds(10)):
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 100 ")
        writer.transport.abort()
    finally:
        holder.transport.abort()


def lines(count: int) -> str:
    """`count` header lines of about 4 KB each."""
    return "".join(f"X-Pad-{n}: {'a' * 4000}\r\n" for n in range(count))


@pytest.mark.parametrize(("path", "shape"), [("/jobs", "v1"), ("/v1/models", "openai")])
async def test_request_headers_past_64_kib_are_refused_not_kept_for_the_answer(served, path, shape):
    """aiohttp takes 128 header lines of 8 KiB: a request kept them, as sent and as text, for as long
    as its answer ran (a job's events), outside any budget."""
    listener = await served()
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    status, _, body = await raw_answer(listener.port, (head + lines(17) + "\r\n").encode())
    assert status.startswith(b"HTTP/1.1 431 ")
    error = body["error"]["message"] if shape == "openai" else body["error"]
    assert "the request headers are " in error and "the limit is 65536" in error
    status, _, _ = await raw_answer(listener.port, (head + lines(15) + "\r\n").encode())
    assert status.startswith(b"HTTP/1.1 200 ")


async def test_headers_that_pass_64_kib_unfinished_are_refused_before_the_header_deadline(served):
    """aiohttp holds each whole header line until the request is complete: a connection that sent up to
    128 lines of 8 KiB and never ended its headers held them until the header deadline."""
    listener = await served(header_timeout=30.0)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(f"GET /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n{lines(17)}".encode())  # no blank line
        async with asyncio.timeout(seconds(5)):
            answer = await reader.read()
        assert answer.startswith(b"HTTP/1.1 431 ") and b"BadRequest: the request headers pass 65536" in answer
        assert not listener.guard.open and not listener.guard.waiting
    finally:
        writer.transport.abort()


async def test_a_lecture_batch_pipelined_behind_another_request_is_served(served):
    """Its headers are parsed while the first request runs: its body is never counted as headers."""
    listener = await served()
    batch = lecture_batch()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            + f"POST /synth_batch?async=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(batch)}\r\n\r\n".encode()
            + batch
        )
        async with asyncio.timeout(seconds(10)):
            answers = await reader.read()
    finally:
        writer.transport.abort()
    assert answers.startswith(b"HTTP/1.1 200 ")
    assert answers.count(b"HTTP/1.1 200 ") == 2 and b'"total": 39' in answers, answers[-300:]


async def test_a_body_drained_after_an_early_answer_is_not_counted_as_the_next_headers(served, monkeypatch):
    """A lecture batch sent with a wrong token is answered 401 before its body is read; aiohttp then
    drains the body and keeps the connection. Before, the drained body counted as the next request's
    headers: past 64 KiB the caller got a stray 431 and its connection cut while it was still sending
    (a reset, not the 401), and the next request on the connection was never answered."""
    monkeypatch.setattr(server, "LINGER_SECONDS", seconds(10))  # (the drain is not what is tested)
    listener = await served(token="a-token-of-twenty-chars")
    batch = lecture_batch()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        writer.write(
            b"POST /synth_batch?async=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\n"
            + f"Content-Type: application/json\r\nContent-Length: {len(batch)}\r\n\r\n".encode()
        )
        async with asyncio.timeout(seconds(10)):
            refused = await reader.readuntil(b"\r\n\r\n")
            assert refused.startswith(b"HTTP/1.1 401 ")
            length = int(refused.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            writer.write(batch + b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            after = await reader.read()
    finally:
        writer.transport.abort()
    assert after.startswith(b"HTTP/1.1 200 ") and b'"ready": true' in after, after[:200]


@pytest.mark.parametrize(
    ("method", "path", "answer"), [("GET", "/health", 200), ("DELETE", "/jobs/none", 404)]
)
async def test_an_empty_chunked_body_on_a_route_that_reads_none_is_no_body(served, method, path, answer):
    """`Transfer-Encoding: chunked` with only its last chunk is an empty body, as `Content-Length: 0`
    is (a client that streams an empty body sends it): before, `a GET request takes no body`."""
    listener = await served()
    status, _, body = await raw_answer(
        listener.port,
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n".encode()
        + b"Connection: close\r\n\r\n0\r\n\r\n",
    )
    assert status.startswith(f"HTTP/1.1 {answer} ".encode()), body


@pytest.mark.parametrize(("method", "path"), [("PUT", "/synth_batch"), ("PATCH", "/v1/audio/speech")])
async def test_a_body_sent_with_a_wrong_method_is_told_the_method_is_wrong(served, method, path):
    """A lecture batch PUT to `/synth_batch` was told `a PUT request takes no body`, as if only the
    body were wrong: it is the method (405, with `Allow`), and the connection still closes unread."""
    listener = await served()
    batch = json.dumps({"sections": [{"idx": 0, "text": "안녕하세요"}]}).encode()
    status, headers, body = await raw_answer(
        listener.port,
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n".encode()
        + f"Content-Length: {len(batch)}\r\n\r\n".encode()
        + batch,
    )
    assert status.startswith(b"HTTP/1.1 405 ") and headers["allow"] == "POST", (status, body)
    assert headers["connection"] == "close"


def test_no_slow_body_is_dropped_for_one_that_would_find_no_room_anyway():
    """Before, room was made by dropping slow bodies one by one, and the new body was then refused all
    the same when they freed too little: a slow upload lost (its caller's 503) for nothing."""
    budget = BodyBudget(1000)
    dropped: list[str] = []
    slow = budget.hold(lambda error: dropped.append("slow"))
    young = budget.hold(lambda error: dropped.append("young"))
    slow.grow(300)
    slow.since -= body_budget.SLOW_BODY_SECONDS  # it has been arriving long enough to be dropped
    young.grow(600)
    new = budget.hold(lambda error: dropped.append("new"))
    with pytest.raises(Exception, match="BodyBudgetFull"):
        new.grow(500)  # 400 past the total: dropping the slow body frees 300, too little
    assert dropped == [] and budget.held == 900 and slow.size == 300 and budget.refused == 1
    new.grow(350)  # 250 past it: the slow body's 300 make room
    assert dropped == ["slow"] and budget.held == 950
