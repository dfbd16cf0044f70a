"""Start-up check of a Redis queue URL: reachable, answering, and a Redis new enough for XAUTOCLAIM."""

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
        return None
    except (RedisError, OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        await client.aclose()


def ping_queue(url: str) -> str | None:
    """None when `url` is a usable Redis, else why not (before the event loop of the server runs)."""
    return asyncio.run(_probe(url))
