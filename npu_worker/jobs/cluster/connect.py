"""Start-up check of a Redis queue URL: reachable, answering, a Redis new enough for XAUTOCLAIM, and a
master (a replica refuses every write)."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from redis.exceptions import RedisError


async def _probe(url: str) -> str | None:
    client = aioredis.from_url(url, socket_connect_timeout=3.0, socket_timeout=3.0)
    try:
        info = await client.info("server")
        version = tuple(int(part) for part in str(info.get("redis_version", "0")).split(".")[:2])
        if version < (6, 2):
            return f"Redis {info.get('redis_version')} is too old (6.2 or newer has XAUTOCLAIM)"
        return replica_refusal((await client.info("replication")).get("role"))
    except (RedisError, OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        await client.aclose()


def replica_refusal(role: object) -> str | None:
    """Why a Redis that is a replica cannot be the queue (its every write refused READONLY: the node's
    consumer groups at start, then every job), None for a master. It was a ReadOnlyError traceback at
    start-up, after the URL was taken as usable."""
    if role in ("slave", "replica"):
        return "it is a replica (READONLY: it refuses every write); point the queue at its master"
    return None


def ping_queue(url: str) -> str | None:
    """None when `url` is a usable Redis, else why not (before the event loop of the server runs)."""
    return asyncio.run(_probe(url))
