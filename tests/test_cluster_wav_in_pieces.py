"""A long section's wav, written by its accepting node's writer over a link too slow to bring it whole within
the command timeout (a real redis-server behind a real TCP proxy that holds back any reply past a size: one
command's answer, not the connection's). The writer read the wav in one GET, whose reply never came in time:
three tries, then its section failed `InternalError` (before the slow-entry fix, never: it was read again
first for ever). Now the wav is read in pieces, each a command whose reply comes within the timeout, and the
section is written whole and `ok`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster import writer
from npu_worker.jobs.cluster.keys import WRITERS, job_key, ready_key, wav_key
from tests.redis_proxy import redis_through
from tests.test_cluster_writer_poison import COUNTS, logged_events
from tests.timing import seconds

HELD_PAST = 256 * 1024  # one command's reply past this many bytes is held back (the link is too slow)


async def _proxy(client_in: Any, client_out: Any, redis_port: int, pumps: set[asyncio.Task[None]]) -> None:
    """Requests pass; each request starts a new reply, whose bytes past `HELD_PAST` never come."""
    redis_in, redis_out = await asyncio.open_connection("127.0.0.1", redis_port)
    replied = [0]  # bytes of the answer to the client's last request so far

    async def requests() -> None:
        with contextlib.suppress(OSError):
            while data := await client_in.read(65536):
                replied[0] = 0
                redis_out.write(data)
                await redis_out.drain()
        redis_out.close()

    async def replies() -> None:
        with contextlib.suppress(OSError):
            while data := await redis_in.read(65536):
                replied[0] += len(data)
                if replied[0] > HELD_PAST:
                    await asyncio.Event().wait()  # held: this reply never comes whole
                client_out.write(data)
                await client_out.drain()
        client_out.close()

    for pump in (requests(), replies()):
        pumps.add(asyncio.create_task(pump))


@pytest.fixture
async def slow_link(redis_server: Any) -> AsyncIterator[str]:
    """A Redis URL through the proxy (set up before the worker: it outlives the node's stop)."""
    async with redis_through(_proxy, redis_server.port) as url:
        yield url


async def test_a_wav_too_long_for_one_reply_within_the_timeout_is_written_whole(
    slow_link: str, worker: Any, redis_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(writer, "WAV_PIECE", 64 * 1024)  # (1 MiB in production)
    state = tmp_path / "node"
    node = await worker(role="both", state_dir=str(state), queue=slow_link)
    stream = ready_key(node.app[SCHEDULER_KEY].node)
    wav = b"RIFF" + bytes(range(256)) * (3 * HELD_PAST // 256)  # 768 KiB: three times a reply's room
    output = state / "outputs" / "long" / "section_0.wav"  # a default output: the node's own folder
    section = {"idx": 0, "text": "long", "output_path": str(output)}
    spec = {"id": "long", "node": "x", "params": {}, "sections": [section], "preview": False}
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await planter.hset(job_key("long"), mapping={**COUNTS, "spec": json.dumps({**spec, "created_at": 0})})
        await planter.set(wav_key("long", 0), wav)
        await planter.xadd(stream, {"job": "long", "idx": 0, "duration": 1, "elapsed": 1})
        async with asyncio.timeout(seconds(60)):  # its section ended (no event says so here: polled)
            while len(await logged_events(planter, "long")) < 2:
                await asyncio.sleep(0.05)
        events = await logged_events(planter, "long")
        pending = (await planter.xpending(stream, WRITERS))["pending"]
    assert [(e["event"], e.get("status")) for e in events] == [("progress", "ok"), ("done", None)], events
    assert output.read_bytes() == wav
    assert pending == 0
