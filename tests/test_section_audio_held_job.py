"""`GET /jobs/{id}/sections/{idx}/audio` and `GET /jobs/{id}/events` of a finished job hold the open
wav, or the log, while their caller reads, not the job read whole from its folder: its sections (every
text of a batch of up to 8 MiB) were held for as long as a send waited on a caller that reads nothing, a
copy per connection. 100 such GETs of one 1 000-section batch of 2 000 Hangul characters each, arriving
0.15 s apart, grew a `serve` (espeak engine) by 449 MiB (the wav) and 260 MiB (the events), 2026-12-07;
at `--max-connections` that is gigabytes from one batch."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
from pathlib import Path

import aiohttp
import pytest

from npu_worker.app_keys import NDJSON_STREAMS_KEY, SCHEDULER_KEY
from npu_worker.jobs.model import Job
from npu_worker.jobs.shared_copies import SharedCopies
from tests.timing import seconds, until

SECTIONS = 125  # a finished batch's sections (a replay of 8 KiB each: their paths' 3 750 characters twice)


def whole_copies_of(job_id: str) -> int:
    """How many `Job`s of `job_id` with their sections are alive (a finished job is kept as a `KeptJob`,
    its status only; a request that needs its sections or log reads it again whole, a `Job`)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, Job) and o.id == job_id and o.sections)


async def engines_alive(port: int) -> None:
    """Until the Redis queue's one node says its engine is alive (a batch before is refused `Loading`)."""
    async with aiohttp.ClientSession() as session, asyncio.timeout(seconds(30)):
        while True:
            async with session.get(f"http://127.0.0.1:{port}/health") as answer:
                if (await answer.json()).get("cluster", {}).get("engines_alive") == 1:
                    return
            await asyncio.sleep(0.05)


def no_lingering(listener) -> None:
    """Readers share one copy of a finished job, which lingers after its last read (at most two, for
    `LINGER_SECONDS`: `test_shared_job_copies.py`); here none lingers, to count what a waiting answer holds."""
    listener.runner.app[SCHEDULER_KEY].copies = SharedCopies(keep=0)


def answer_begun(client: socket.socket) -> bool:
    """Whether the answer's first bytes reached the client (the wav is open then, its send under way)."""
    try:
        return bool(client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


async def test_a_download_nobody_reads_holds_the_open_wav_not_the_whole_job(served, tmp_path):
    from tests.tone_engine import ToneEngine

    listener = await served(ToneEngine(seconds_per_char=0.1, chunk_seconds=10.0))
    no_lingering(listener)
    sections = [{"idx": 0, "text": "가" * 2000}] + [{"idx": i, "text": "나" * 20} for i in range(1, 20)]
    async with aiohttp.ClientSession() as session:  # section 0: 200 s of audio, 9.6 MB, past every buffer
        url = f"http://127.0.0.1:{listener.port}/synth_batch"
        async with session.post(url, json={"sections": sections, "stream": False}) as answer:
            assert answer.status == 200, await answer.text()
            job_id = (await answer.json())["job_id"]
    await until(lambda: not listener.guard.open, "the batch's connection to close")
    held_anyway = whole_copies_of(job_id)  # (the engine side's last job may still be referenced)
    assert held_anyway <= 1
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads
    client.setblocking(False)
    try:
        loop = asyncio.get_running_loop()
        await loop.sock_connect(client, ("127.0.0.1", listener.port))
        request = f"GET /jobs/{job_id}/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        await loop.sock_sendall(client, request.encode())
        await until(lambda: answer_begun(client), "the wav's answer to begin")
        assert whole_copies_of(job_id) <= held_anyway  # one more for as long as the send waited
    finally:
        client.close()


@pytest.mark.parametrize("queue", ["local", "redis"])
async def test_an_events_replay_nobody_reads_holds_the_log_not_the_sections(served, tmp_path, queue, request):
    """The same for `GET /jobs/{id}/events` of a finished job: its replay needs the job's log, not its
    sections, which a stream nobody read held, a copy per connection (100 such streams of a finished
    1 000-section batch of 2 000 characters each grew a `serve` by 42-278 MiB, 2026-12-07). A node of a
    Redis queue reads the finished job whole from Redis for each such GET: it held that copy too."""
    if queue == "redis":
        listener = await served(queue=request.getfixturevalue("redis_server").url, claim_timeout=1.0)
        await engines_alive(listener.port)
    else:
        listener = await served()
    no_lingering(listener)
    folder = tmp_path.joinpath(*["d" * 250] * 15)  # each section's path in its events: 1 MB of replay,
    folder.mkdir(parents=True)  # past what the kernel buffers for the connection (small: set below)
    sections = [
        {"idx": i, "text": "가" * 5, "output_path": str(folder / f"{i}.wav")} for i in range(SECTIONS)
    ]
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{listener.port}/synth_batch"
        async with session.post(url, json={"sections": sections, "stream": False}) as answer:
            assert answer.status == 200, await answer.text()
            job_id = (await answer.json())["job_id"]
    await until(lambda: not listener.guard.open, "the batch's connection to close")
    held_anyway = whole_copies_of(job_id)
    assert held_anyway <= 1
    # the worker's side of the connection buffers 16 KiB at most (a connection inherits its listener's;
    # the kernel may grow it to 4 MiB, which 1 000 sections' replay was made to pass: 67 s loaded, Redis)
    listener.server.sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads
    client.setblocking(False)
    try:
        loop = asyncio.get_running_loop()
        await loop.sock_connect(client, ("127.0.0.1", listener.port))
        await loop.sock_sendall(
            client, f"GET /jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
        await until(lambda: answer_begun(client), "the replay to begin")
        assert len(listener.runner.app[NDJSON_STREAMS_KEY]) == 1, "the replay ended: it fitted in the buffers"
        assert whole_copies_of(job_id) <= held_anyway  # one more for as long as the replay waited
    finally:
        client.close()
    async with aiohttp.ClientSession() as session:  # and a caller that reads gets the log once, to its end
        async with session.get(f"http://127.0.0.1:{listener.port}/jobs/{job_id}/events") as answer:
            lines = [json.loads(line) async for line in answer.content if line.strip()]
    seqs = [line["seq"] for line in lines if "seq" in line]  # (a heartbeat has none)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 2 * SECTIONS and lines[-1]["event"] == "done"
    if queue == "redis":  # the log-only copy is finished: a node's follower never follows it again
        scheduler = listener.runner.app[SCHEDULER_KEY]  # from its first entry, into the copy's log
        replayed = (await asyncio.to_thread(scheduler.find_job, job_id)).log_only()
        assert scheduler.followers.attach(replayed) is replayed
        assert all(live is not replayed for live in scheduler.followers.live_jobs())
        assert replayed.log[-1].seq == seqs[-1]


async def test_a_download_nobody_reads_on_a_redis_queue_fetches_the_wav_a_piece_at_a_time(
    served, tmp_path, redis_server
):
    """On a `--queue redis://` node a section's wav is Redis's copy: it was fetched whole for each GET
    and held while its caller read nothing (28.8 MB for 600 s of audio, a copy per connection); now a
    piece (256 KiB) is read from Redis as the caller takes the one before, ranges and HEAD alike.
    The worker's send buffer is kept small (below), so 100 s of audio (4.8 MB) is past what the kernel
    takes: a 600 s wav, made to pass its default 4 MiB, was most of this file's CPU (generated, written,
    stored in Redis and read back)."""
    import redis.asyncio as aioredis

    from tests.tone_engine import ToneEngine

    engine = ToneEngine(seconds_per_char=0.05, chunk_seconds=10.0)
    listener = await served(engine, queue=redis_server.url, claim_timeout=1.0)
    await engines_alive(listener.port)
    base = f"http://127.0.0.1:{listener.port}"
    async with aiohttp.ClientSession() as session:  # section 0: 100 s of audio, 4.8 MB
        body = {"sections": [{"idx": 0, "text": "가" * 2000}], "stream": False}
        async with session.post(f"{base}/synth_batch", json=body) as answer:
            assert answer.status == 200, await answer.text()
            job_id = (await answer.json())["job_id"]
        async with session.get(f"{base}/jobs/{job_id}/result") as answer:
            written = await asyncio.to_thread(Path((await answer.json())["wav_paths"][0]).read_bytes)
    # the worker's side of the connection buffers 16 KiB at most (a connection inherits its listener's)
    listener.server.sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
    redis = aioredis.from_url(redis_server.url)
    try:
        sent_before = (await redis.info("stats"))["total_net_output_bytes"]
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # and it never reads
        client.setblocking(False)
        try:
            loop = asyncio.get_running_loop()
            await loop.sock_connect(client, ("127.0.0.1", listener.port))
            request = f"GET /jobs/{job_id}/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            await loop.sock_sendall(client, request.encode())
            await until(lambda: answer_begun(client), "the wav's answer to begin")
            fetched = (await redis.info("stats"))["total_net_output_bytes"] - sent_before
            # (pieces past the first only as the kernel takes them: 16 KiB here, set above)
            assert fetched < len(written) // 2, f"{fetched} bytes of the wav fetched from Redis for a reader"
        finally:
            client.close()
    finally:
        await redis.aclose()
    async with aiohttp.ClientSession() as session:  # a caller that reads gets the wav whole, or its range
        async with session.get(f"{base}/jobs/{job_id}/sections/0/audio") as answer:
            assert answer.status == 200 and await answer.read() == written
        ranged = {"Range": "bytes=300000-300999"}
        async with session.get(f"{base}/jobs/{job_id}/sections/0/audio", headers=ranged) as answer:
            assert answer.status == 206 and await answer.read() == written[300000:301000]
            assert answer.headers["Content-Range"] == f"bytes 300000-300999/{len(written)}"
        async with session.head(f"{base}/jobs/{job_id}/sections/0/audio") as answer:
            assert answer.status == 200 and answer.content_length == len(written)


@pytest.mark.parametrize("loss", ["key removed", "redis stopped"])
async def test_a_redis_wav_lost_mid_download_cuts_the_answer_short(served, redis_server, loss):
    """A Redis node reads the wav a piece at a time while it is sent: once the answer began, the key
    removed (retention) or Redis gone cuts it short, the connection closed: never a wav that reads as
    whole, nor a caller left waiting for the rest; the node goes on answering other requests."""
    import redis.asyncio as aioredis

    from npu_worker.jobs.cluster.keys import wav_key
    from tests.tone_engine import ToneEngine

    listener = await served(ToneEngine(seconds_per_char=0.05, chunk_seconds=10.0), queue=redis_server.url)
    await engines_alive(listener.port)
    base = f"http://127.0.0.1:{listener.port}"
    async with aiohttp.ClientSession() as session:  # section 0: 100 s of audio, 4.8 MB
        body = {"sections": [{"idx": 0, "text": "가" * 2000}], "stream": False}
        async with session.post(f"{base}/synth_batch", json=body) as answer:
            assert answer.status == 200, await answer.text()
            job_id = (await answer.json())["job_id"]
    listener.server.sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)  # (16 KiB buffered)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port, limit=2**16)
    try:
        writer.write(f"GET /jobs/{job_id}/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        assert head.startswith("HTTP/1.1 200"), head
        length = int(
            next(h for h in head.split("\r\n") if h.lower().startswith("content-length:")).split(":")[1]
        )
        if loss == "key removed":
            redis = aioredis.from_url(redis_server.url)
            assert await redis.delete(wav_key(job_id, 0)) == 1
            await redis.aclose()
        else:
            await asyncio.to_thread(redis_server.stop)
        async with asyncio.timeout(seconds(60)):  # the rest, to the connection's end
            received = len(await reader.read())
        assert received < length, f"{received} of {length} bytes: the answer read as whole"
    finally:
        writer.close()
    async with aiohttp.ClientSession() as session:  # (a 503 naming Redis unreachable while it is gone)
        async with session.get(f"{base}/health") as answer:
            assert answer.status == (200 if loss == "key removed" else 503), await answer.text()
