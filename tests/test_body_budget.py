"""One bound on the request-body bytes the whole worker holds at once (npu_worker/body_budget.py):
bodies held open by hostile callers, each under --max-body-bytes, no longer add up without limit, and
a lecture batch sent at once still goes through while they hold the budget."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import tracemalloc

import aiohttp
import pytest
import websockets

from npu_worker import body_budget
from npu_worker.app_keys import BODY_BUDGET_KEY
from npu_worker.body_budget import BodyBudget
from npu_worker.config_sources import add_settings_arguments, load_settings
from tests.body_support import KIB, answer_of, lecture_batch, raw_answer
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


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


async def rest_of_body(writer: asyncio.StreamWriter, size: int) -> None:
    """Send `size` more body bytes, 16 KiB at a time, until the connection ends."""
    try:
        for _ in range(size // (16 * KIB)):
            writer.write(b" " * (16 * KIB))
            await writer.drain()
    except (ConnectionError, OSError):
        pass


@pytest.fixture
def quick_drops(monkeypatch):
    """A body may be dropped for another once it has arrived for 0.3 s (1 s in production)."""
    monkeypatch.setattr(body_budget, "SLOW_BODY_SECONDS", 0.3)


@pytest.fixture
def young_until_aged(monkeypatch):
    """Bodies stay too young to drop until the test ages them all (`aged`): the first phase's "nothing
    to drop" held only while the three holders' bytes came within 0.3 s, which a loaded box outlasts
    (the fourth then dropped the oldest, and the count of drops came out 2)."""
    monkeypatch.setattr(body_budget, "SLOW_BODY_SECONDS", 3600.0)
    return lambda: monkeypatch.setattr(body_budget, "SLOW_BODY_SECONDS", 0.0)


async def test_bodies_held_open_are_bounded_together_and_a_lecture_batch_still_goes_through(
    served, young_until_aged, caplog
):
    """Before: every connection held its body (up to --max-body-bytes) for --body-timeout, whatever the
    others held: 512 × 8 MiB. Now the bodies together stay within the budget; a new one finds room by
    dropping the one arriving longest (a 503 that closes its connection), and one that finds none is a
    503 BodyBudgetFull with Retry-After."""
    listener = await served(body_budget_bytes=2048 * KIB)
    holders = [await held_open(listener.port, 4096 * KIB, 600 * KIB) for _ in range(3)]
    try:
        await bounded_together(listener, holders, young_until_aged)
    finally:
        for _, writer in holders:
            writer.transport.abort()
    assert "Traceback" not in caplog.text and "Unhandled exception" not in caplog.text, caplog.text


async def bounded_together(listener, holders, aged) -> None:
    budget = listener.runner.app[BODY_BUDGET_KEY]
    await until(lambda: budget.held >= 3 * 600 * KIB - 64 * KIB, "three bodies to be held")

    # A fourth, while the three are young: no room, nothing to drop. Refused, its connection closed;
    # it goes on sending its body while it reads (a reset in place of the answer, on CI, before
    # `lingering_close`: the worker closed with its bytes unread).
    reader, writer = await held_open(listener.port, 4096 * KIB, 600 * KIB)
    sending = asyncio.create_task(rest_of_body(writer, 3496 * KIB))
    try:
        status, headers, body = await answer_of(reader)
    finally:
        sending.cancel()
        writer.transport.abort()
    assert status.startswith(b"HTTP/1.1 503 ")
    assert headers["retry-after"] == "1"
    assert body["error"].startswith("BodyBudgetFull: ")
    assert budget.held <= budget.total

    # The lecture, sent at once once they are old: the oldest held body makes room for it.
    aged()
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
