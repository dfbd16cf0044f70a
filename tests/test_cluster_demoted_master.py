"""A failover behind a DNS name (two real redis-servers; a resolver in the node's place, as in
test_cluster_redis_lookups, moves the name from the old master to a real TCP forwarder at another loopback
address that reaches the new one): the old master, demoted to a replica, answers every write READONLY, and
the node's pooled connections stayed with it, each write refused (waited out as Redis refusing every write,
then told to callers as `QueueUnavailable`) for as long as the connection lived. Now a connection to a name
that is answered READONLY is dropped: the next command connects again, the name looked up anew, and
reaches the new master."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ReadOnlyError

from npu_worker.jobs.cluster.pools import LOOKUPS, waiting_client
from tests.redis_server import RedisServer
from tests.test_cluster_engine_refused_writes import dead_port
from tests.test_cluster_redis_lookups import answers
from tests.timing import seconds


async def _forward(client_in: Any, client_out: Any, port: int, pumps: set[asyncio.Task[None]]) -> None:
    redis_in, redis_out = await asyncio.open_connection("127.0.0.1", port)

    async def pump(reader: Any, writer: Any) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    for task in (pump(client_in, redis_out), pump(redis_in, client_out)):
        pumps.add(asyncio.create_task(task))


@contextlib.asynccontextmanager
async def _new_master_at(host: str, port: int, new_master_port: int) -> AsyncIterator[None]:
    """`host:port` reaches the new master (the old one keeps the same port at its own address)."""
    pumps: set[asyncio.Task[None]] = set()
    server = await asyncio.start_server(lambda r, w: _forward(r, w, new_master_port, pumps), host, port)
    try:
        yield
    finally:
        server.close()
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


async def test_a_write_after_a_failover_behind_a_name_reaches_the_new_master(
    redis_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    (tmp_path / "old").mkdir()
    old = RedisServer(tmp_path / "old")
    old.start()
    master = dead_port()
    monkeypatch.setattr(LOOKUPS, "resolve", answers("127.0.0.1"))
    client = waiting_client(
        f"redis://redis-primary.test:{old.port}/0", connections=2, wait=5.0, socket_timeout=5.0
    )
    try:
        async with _new_master_at("127.0.0.2", old.port, redis_server.port):
            await client.set("written", "before")  # its connection, pooled, is the old master's
            monkeypatch.setattr(LOOKUPS, "resolve", answers("127.0.0.2"))  # the name moves
            old.command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))  # the old master demoted
            tries = 0
            async with asyncio.timeout(seconds(15)):
                while True:  # what a loop does while Redis refuses every write: try again
                    tries += 1
                    try:
                        await client.set("written", "after")
                        break
                    except ReadOnlyError:
                        if tries >= 5:
                            raise AssertionError(
                                f"{tries} writes refused READONLY by the old master"
                            ) from None
                        await asyncio.sleep(0.1)
    finally:
        await client.aclose()
        master.close()
        old.stop()
    async with aioredis.Redis.from_url(redis_server.url) as new:
        assert await new.get("written") == b"after"
