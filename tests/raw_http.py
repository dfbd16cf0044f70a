"""Raw HTTP exchanges on a real socket, for tests of what aiohttp's client would not send."""

from __future__ import annotations

import asyncio


async def raw_exchange(port: int, data: bytes, read_timeout: float) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        async with asyncio.timeout(read_timeout):
            return await reader.read()  # until the server closes
    finally:
        writer.close()


HEALTH_REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
