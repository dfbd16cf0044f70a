"""A worker that is not one, on a real socket: each request is answered with the raw bytes `script`
returns for its method and path (a lie, a cut, garbage), then the connection is closed, so tests can
drive the pipeline client through what a real worker should never send."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

# (method, path) -> the whole reply, or chunks (an async iterator) sent as they come
Script = Callable[[str, str], "bytes | AsyncIterator[bytes]"]


def ndjson(*events: dict[str, Any] | bytes) -> bytes:
    """A 200 NDJSON reply whose body ends with the connection: each event one line (bytes as they are)."""
    body = b"".join(e if isinstance(e, bytes) else json.dumps(e).encode() + b"\n" for e in events)
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n" + body


def reply(status: int, body: bytes, length: int | None = None, headers: str = "") -> bytes:
    """A reply announcing `length` bytes (default: the body's own length)."""
    announced = len(body) if length is None else length
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {announced}\r\n"
        f"{headers}Connection: close\r\n\r\n"
    ).encode() + body


class RogueWorker:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[tuple[str, str]] = []
        self.heads: list[bytes] = []  # each request's head, headers included
        self.sent = 0  # bytes of all replies so far
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> RogueWorker:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, path = head.split(b" ")[:2]
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            self.requests.append((method.decode(), path.decode()))
            self.heads.append(head)
            answer = self.script(method.decode(), path.decode())
            chunks = answer if not isinstance(answer, bytes) else _once(answer)
            async for chunk in chunks:
                writer.write(chunk)
                self.sent += len(chunk)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass  # the client hung up
        finally:
            self._writers.discard(writer)
            writer.close()


def relay_to(port: int) -> Script:
    """A request sent on to the worker at `port` as it was asked (no body), its answer as it comes."""

    async def relay(method: str, path: str) -> AsyncIterator[bytes]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        try:
            while chunk := await reader.read(65536):
                yield chunk
        finally:
            writer.close()

    return relay


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data
