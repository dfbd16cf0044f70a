"""A node's presence after a failover behind a DNS name (two real redis-servers; a resolver in the node's place
moves the name to a real forwarder that reaches the new master, as test_cluster_demoted_master does). The
node's commands follow the name (a connection answered READONLY is dropped: `pools.py`), but its presence
subscription stayed on the old master, now a replica: it reads no command and is answered no READONLY. Its
peers read `PUBSUB NUMSUB` from the new master, where it said 0 for every node: once that Redis too refused
every write (full), every node was counted out 5 s in, as before presence. Now the node reads its own
presence where it reads Redis every `CHECK_SECONDS`, and subscribes again (the name looked up anew) where
it is not there."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ReadOnlyError

from npu_worker.jobs.cluster import presence
from npu_worker.jobs.cluster.pools import LOOKUPS
from npu_worker.jobs.cluster.store import RedisJobs
from tests.redis_server import RedisServer
from tests.test_cluster_demoted_master import _new_master_at
from tests.test_cluster_engine_refused_writes import dead_port
from tests.test_cluster_redis_lookups import answers
from tests.timing import seconds


async def test_a_presence_follows_the_name_to_the_new_master(
    redis_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(presence, "CHECK_SECONDS", 0.5)  # (5 s in production)
    (tmp_path / "old").mkdir()
    old = RedisServer(tmp_path / "old")
    old.start()
    master = dead_port()
    monkeypatch.setattr(LOOKUPS, "resolve", answers("127.0.0.1"))
    node = RedisJobs(f"redis://redis-primary.test:{old.port}/0")
    holding: asyncio.Future[None] | None = None
    found: set[str] | None = set()
    try:
        async with _new_master_at("127.0.0.2", old.port, redis_server.port):
            holding = asyncio.ensure_future(
                presence.hold_presence(node.own_reads, "n", None, node.own_commands)
            )
            async with asyncio.timeout(seconds(10)):  # subscribed on the old master
                while await presence.present(node.own_commands, ["n"]) != {"n"}:
                    await asyncio.sleep(0.05)
            monkeypatch.setattr(LOOKUPS, "resolve", answers("127.0.0.2"))  # the name moves
            old.command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))  # the old master demoted
            peer = aioredis.Redis(host="127.0.0.1", port=redis_server.port)  # a peer, reading the new master
            try:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(seconds(15)):
                        while (found := await presence.present(peer, ["n"])) != {"n"}:
                            with contextlib.suppress(ReadOnlyError):  # its beat, as every second
                                await node.heartbeat("n", {"role": "engine"})
                            await asyncio.sleep(0.1)
            finally:
                await peer.aclose()
    finally:
        if holding is not None:
            holding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await holding
        await node.close()
        master.close()
        old.stop()
    assert found == {"n"}, "the node's presence stayed on the demoted master, where no peer reads it"
