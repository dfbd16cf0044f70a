"""WS /v1/audio/speech/stream's bounds and endings: a client that leaves or closes mid-utterance, sentences
and utterances queued ahead, errors counted once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket

import websockets

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_openai_stream_ws import receive, receive_until, send_fragments, stream_url
from tests.test_ws_support import ChunkGate
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_leaving_mid_utterance_cancels_the_queued_sentences(worker):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    gate.allow(1)
    try:
        async with websockets.connect(stream_url(client)) as ws:
            await send_fragments(ws, "하나입니다. 둘입니다. 셋입니다. ")
            assert (await receive(ws))["type"] == "audio.start"
            async with asyncio.timeout(seconds(10)):  # audio.start comes at submission: leave only
                while not engine.calls:  # once the first sentence is on the engine (mid-utterance)
                    await asyncio.sleep(0.01)
        async with asyncio.timeout(seconds(10)):
            while scheduler.queue_size() > 1:  # only the gated first sentence is left
                await asyncio.sleep(0.01)
            gate.open()
            while scheduler.jobs_running():
                await asyncio.sleep(0.01)
    finally:
        gate.open()
    assert engine.calls == ["하나입니다."]


async def test_leaving_with_a_second_utterance_open_ends_every_pump(worker):
    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    gate.allow(1)
    try:
        async with websockets.connect(stream_url(client)) as ws:
            await send_fragments(ws, "첫 발화입니다.")
            await ws.send(json.dumps({"type": "input.done"}))
            await send_fragments(ws, "두 번째 발화는 아직")  # open: its pump waits for more text
            assert (await receive(ws))["type"] == "audio.start"
            async with asyncio.timeout(seconds(10)):  # audio.start comes at submission: leave only
                while not engine.calls:  # once the first sentence is on the engine
                    await asyncio.sleep(0.01)
        async with asyncio.timeout(seconds(10)):
            gate.open()
            while scheduler.jobs_running():
                await asyncio.sleep(0.01)
            # Every pump task of the closed socket has ended (none waits for a queue that never fills).
            while [t for t in asyncio.all_tasks() if t.get_name().startswith("speech-stream-")]:
                await asyncio.sleep(0.01)
    finally:
        gate.open()
    assert engine.calls == ["첫 발화입니다."]


async def test_a_socket_queues_a_bounded_number_of_sentences_ahead(worker):
    """A client that sends text much faster than it is spoken (or never reads) had every sentence queued
    at once: the audio made for it piled up without bound (1 GB in 45 s with espeak) and one socket
    filled the whole queue. Now at most MAX_SENTENCES_AHEAD wait; the rest follow as sentences are sent."""
    from npu_worker.openai_compat.stream_ws import MAX_SENTENCES_AHEAD

    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    count = 3 * MAX_SENTENCES_AHEAD
    text = " ".join(f"문장 {n}번입니다." for n in range(count)) + " "
    try:
        async with websockets.connect(stream_url(client), max_size=None) as ws:
            await ws.send(json.dumps({"type": "input.text", "text": text}))
            await ws.send(json.dumps({"type": "input.done"}))
            async with asyncio.timeout(seconds(10)):
                while scheduler.jobs_running() < MAX_SENTENCES_AHEAD:
                    await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)
            assert scheduler.jobs_running() == MAX_SENTENCES_AHEAD  # the first is held on the engine
            gate.open()
            items = await receive_until(ws, "session.done")
    finally:
        gate.open()
    assert items[-1]["total_sentences"] == count
    started = [i["sentence_text"] for i in items if isinstance(i, dict) and i["type"] == "audio.start"]
    assert started == [f"문장 {n}번입니다." for n in range(count)]


async def test_leaving_while_sentences_wait_for_their_place_ends_everything(worker):
    from npu_worker.openai_compat.stream_ws import MAX_SENTENCES_AHEAD

    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    count = 3 * MAX_SENTENCES_AHEAD
    try:
        async with websockets.connect(stream_url(client), close_timeout=0.5) as ws:
            await ws.send(json.dumps({"type": "input.text", "text": "가나다라입니다. " * count}))
            async with asyncio.timeout(seconds(10)):
                while scheduler.jobs_running() < MAX_SENTENCES_AHEAD:
                    await asyncio.sleep(0.01)
        gate.open()
        async with asyncio.timeout(seconds(10)):
            while scheduler.jobs_running() or [
                t for t in asyncio.all_tasks() if t.get_name().startswith("speech-stream-")
            ]:
                await asyncio.sleep(0.01)
    finally:
        gate.open()
    assert len(engine.calls) <= MAX_SENTENCES_AHEAD


async def test_a_close_while_sentences_wait_for_their_place_is_seen_at_once(worker):
    """While MAX_SENTENCES_AHEAD sentences waited, the socket was not read: a client's close was seen
    only after its close timeout (~10 s) or the next sentence sent, and the queued ones ran meanwhile."""
    from npu_worker.openai_compat.stream_ws import MAX_SENTENCES_AHEAD

    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    try:
        async with websockets.connect(stream_url(client)) as ws:  # the default close timeout, 10 s
            await ws.send(json.dumps({"type": "input.text", "text": "가나다라입니다. " * 12}))
            async with asyncio.timeout(seconds(10)):  # (and the first held on the engine: on a busy
                # machine the engine thread had not yet taken it at the close, and it was dropped too)
                while scheduler.jobs_running() < MAX_SENTENCES_AHEAD or not engine.calls:
                    await asyncio.sleep(0.01)
        # the server answered the close frame (unread, the client would have given up after its timeout)
        assert ws.protocol.close_rcvd is not None
        async with asyncio.timeout(seconds(3)):  # the gate is still shut: nothing was sent meanwhile
            while scheduler.queue_size() > 1:  # only the first, held on the engine, is left
                await asyncio.sleep(0.01)
    finally:
        gate.open()
    async with asyncio.timeout(seconds(10)):
        while scheduler.jobs_running():
            await asyncio.sleep(0.01)
    assert len(engine.calls) == 1, engine.calls


async def test_a_close_from_a_client_that_reads_nothing_stops_its_sentences_at_once(worker):
    """A client that stopped reading (its sentences wait to be sent) and then closed: the close frame
    was not read while sentences waited for their place, so those queued were made until the client's
    close timeout dropped the connection."""
    from npu_worker.openai_compat.stream_ws import MAX_SENTENCES_AHEAD

    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=0.05)  # made at about the pace it plays
    client = await worker(engine)
    scheduler = client.app[SCHEDULER_KEY]
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((client.host, client.port))
    ws = await websockets.connect(stream_url(client), sock=sock, max_queue=1, close_timeout=seconds(10))
    sentence = "가나다라마 " * 33 + "입니다. "  # 4 s of audio, made in about 4 s
    await ws.send(json.dumps({"type": "input.text", "text": sentence * 9}))
    await asyncio.sleep(2.0)  # the worker's sends now wait for a reader that never comes
    assert scheduler.jobs_running() == MAX_SENTENCES_AHEAD, engine.calls
    closing = asyncio.ensure_future(ws.close())
    try:
        async with asyncio.timeout(seconds(3)):
            while scheduler.jobs_running():
                await asyncio.sleep(0.01)
    finally:
        closing.cancel()  # it would wait its close timeout for a close frame it does not read
        ws.transport.abort()  # (the socket closed under it alone left it open: a later GC warned)
        sock.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await closing


async def test_the_sockets_errors_are_counted_in_metrics_once(worker):
    """The stream socket's own `error` messages (a bad session.config, an unknown message) were not in
    npu_worker_errors_total, unlike /ws's and every HTTP route's; a sentence's failure is counted once,
    as its section's error event."""
    from tests.test_metrics import scrape, value

    client = await worker(ToneEngine(fail_on="boom"))
    names = ("UnknownVoice", "UnknownMessage", "EngineError")
    before = await scrape(client)
    async with websockets.connect(stream_url(client)) as ws:
        await ws.send(json.dumps({"type": "session.config", "voice": "nobody"}))
        assert (await receive(ws))["code"] == "UnknownVoice"
        await ws.send(json.dumps({"type": "dance"}))
        assert (await receive(ws))["code"] == "UnknownMessage"
        await ws.send(json.dumps({"type": "input.text", "text": "boom."}))
        await ws.send(json.dumps({"type": "input.done"}))
        items = await receive_until(ws, "session.done")
    assert [i["code"] for i in items if isinstance(i, dict) and i["type"] == "error"] == ["EngineError"]
    after = await scrape(client)
    counted = {name: value(after, "npu_worker_errors_total", name=name) for name in names}
    assert counted == {name: value(before, "npu_worker_errors_total", name=name) + 1 for name in names}


async def test_a_socket_keeps_a_bounded_number_of_utterances_ahead(worker):
    """`input.done` sent in a loop while a sentence played made one task each: 20 000 of them (0.4 MB)
    held the event loop for 10 s and kept 20 000 tasks. Now at most MAX_UTTERANCES_AHEAD are open or
    waiting; the rest wait unread, and every one is answered, in order, once the audio has played."""
    from npu_worker.openai_compat.stream_ws import MAX_UTTERANCES_AHEAD

    engine = ToneEngine(chunk_seconds=0.05)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    count = 50 * MAX_UTTERANCES_AHEAD

    def pumps() -> int:
        return sum(t.get_name().startswith("speech-stream-") for t in asyncio.all_tasks()) - 1

    try:
        async with websockets.connect(stream_url(client), max_size=None) as ws:
            await ws.send(json.dumps({"type": "input.text", "text": "첫 문장입니다. "}))
            assert (await receive(ws))["type"] == "audio.start"
            for _ in range(count):
                await ws.send(json.dumps({"type": "input.done"}))
            await ws.ping()  # the server has read every message the inbox takes
            await asyncio.sleep(0.2)
            assert pumps() <= MAX_UTTERANCES_AHEAD
            gate.open()
            dones = []
            while len(dones) < count:
                item = await receive(ws)
                if isinstance(item, dict) and item["type"] == "session.done":
                    dones.append(item)
    finally:
        gate.open()
    assert [d["utterance_index"] for d in dones] == list(range(count))
    assert [d["total_sentences"] for d in dones] == [1] + [0] * (count - 1)
