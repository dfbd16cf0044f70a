"""Many `/health` and `/ready` calls at once on a Redis node (a real redis-server, a real worker process):
both are open to anyone (no token), and each read the cluster view from Redis itself."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from npu_worker.jobs.cluster.heartbeat import HEALTH_VIEW_FRESH, HEARTBEAT_SECONDS
from tests.cluster_support import node_starter
from tests.redis_server import RedisServer
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking

CALLS = 300


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


def view_reads(redis_server: RedisServer) -> int:
    """HGETALL calls Redis has run: one per read of the cluster view (and one a minute in FORGET_NODES)."""
    stats = redis_server.command("INFO", "commandstats").decode()
    found = re.search(r"cmdstat_hgetall:calls=(\d+)", stats)
    return int(found.group(1)) if found else 0


async def flood(base: str, route: str) -> tuple[list[tuple[int, str]], float]:
    """CALLS GETs of `route` sent at once: each answer's status and body, and how long they all took."""
    timeout = aiohttp.ClientTimeout(total=seconds(60))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as session:

        async def one() -> tuple[int, str]:
            async with session.get(base + route) as response:
                return response.status, await response.text()

        began = time.monotonic()
        answers = await asyncio.gather(*(one() for _ in range(CALLS)))
        return answers, time.monotonic() - began


@pytest.mark.parametrize("route", ["/health", "/ready"])
async def test_open_health_calls_at_once_share_their_reads_of_redis(
    start_node: Any, redis_server: RedisServer, route: str
) -> None:
    """400 at once took the node's 100 Redis connections: most answered 503 `Redis is unreachable
    (MaxConnectionsError)`, and the node's own loops (engine, writer, heartbeat) and callers' submits
    were refused the same way meanwhile."""
    node = start_node("both-1")
    before = view_reads(redis_server)
    answers, took = await flood(node.base, route)
    reads = view_reads(redis_server) - before
    assert not [body for _, body in answers if "MaxConnectionsError" in body], answers[:3]
    # the heartbeat loop's own reads, one a second, and /health's, one per HEALTH_VIEW_FRESH at most
    bound = took / HEALTH_VIEW_FRESH + took / HEARTBEAT_SECONDS + 3
    assert reads <= bound, f"{reads} reads of the cluster view for {CALLS} calls in {took:.2f} s"
