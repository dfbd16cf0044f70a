"""A writer entry whose own reply outlasts the command timeout (a real redis-server behind a real TCP
proxy that holds back any connection's reply past a size: a link too slow for a long section's wav).
The timeout was read as Redis away: the entry stayed pending, and the writer read its pending entries
again from the start, the same entry first, for ever: the entries behind it were never written and its
own section never ended. Now an entry that timed out while Redis answers is read after the others, and
after `SLOW_ENTRY_TRIES` such tries its section is failed and the entry acknowledged."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster import store
from npu_worker.jobs.cluster.keys import WRITERS, job_key, ready_key, wav_key
from tests.test_cluster_writer_poison import COUNTS, logged_events, spec
from tests.timing import seconds

HELD_PAST = 256 * 1024  # a connection's replies past this many bytes are held back (small ones pass)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hold_past: int | None) -> None:
    sent = 0
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            sent += len(data)
            if hold_past is not None and sent > hold_past:
                await asyncio.Event().wait()  # held: the reply never comes whole (the link is too slow)
            writer.write(data)
            await writer.drain()
    writer.close()


@pytest.fixture
async def slow_link(redis_server: Any) -> AsyncIterator[str]:
    """A Redis URL through a proxy whose connections pass small replies and hold back large ones (set up
    before the worker: it outlives the node's stop)."""
    redis_port = redis_server.port
    pumps: set[asyncio.Task[None]] = set()

    async def serve(client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        redis_in, redis_out = await asyncio.open_connection("127.0.0.1", redis_port)
        for task in (_pump(client_in, redis_out, None), _pump(redis_in, client_out, HELD_PAST)):
            pumps.add(asyncio.create_task(task))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
    finally:
        server.close()
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


async def test_an_entry_whose_reply_outlasts_the_timeout_ends_and_the_ones_behind_it_are_written(
    slow_link: str, worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(store, "COMMAND_TIMEOUT", seconds(1))  # (5 s a try in production)
    caplog.set_level(logging.WARNING, logger="npu_worker.jobs.cluster")
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=slow_link)
    stream = ready_key(node.app[SCHEDULER_KEY].node)
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        for job_id, wav in (("slow", b"RIFF" * (HELD_PAST // 2)), ("sound", b"RIFF")):
            await planter.hset(job_key(job_id), mapping={**COUNTS, "spec": spec(job_id)})
            await planter.set(wav_key(job_id, 0), wav)
        for job_id in ("slow", "sound"):  # the slow one first
            await planter.xadd(stream, {"job": job_id, "idx": 0, "duration": 1, "elapsed": 1})
        async with asyncio.timeout(seconds(30)):  # both ended (no event says so: polled)
            while len(await logged_events(planter, "slow")) < 2 or not await logged_events(planter, "sound"):
                await asyncio.sleep(0.05)
        sound, slow = await logged_events(planter, "sound"), await logged_events(planter, "slow")
        pending = (await planter.xpending(stream, WRITERS))["pending"]
    assert [e["event"] for e in sound] == ["progress", "done"] and sound[0]["status"] == "ok", sound
    assert [(e["event"], e.get("idx")) for e in slow] == [("error", 0), ("done", None)], slow
    assert slow[0]["error"].startswith("InternalError: the writer could not handle this section's entry ")
    assert pending == 0
    said = [r.getMessage() for r in caplog.records if "dropped entry" in r.getMessage()]
    assert len(said) == 1 and "'slow'" in said[0] and "within" in said[0], caplog.text
