"""Raw HTTP exchanges on a real socket, for tests of what aiohttp's client would not send."""

from __future__ import annotations

import asyncio
import json
import re
import socket


async def raw_exchange(port: int, data: bytes, read_timeout: float) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        async with asyncio.timeout(read_timeout):
            return await reader.read()  # until the server closes
    finally:
        writer.close()


def exchange(port: int, data: bytes, timeout: float) -> bytes:
    """`data` sent on a fresh connection, and everything the worker answers until it closes (blocking)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(data)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


HEALTH_REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def refusal_of(answer: bytes) -> tuple[int, str, str]:
    """(status, the error's name, its message) of an answer in either shape (OpenAI's under /v1/)."""
    head, _, body = answer.partition(b"\r\n\r\n")
    error = json.loads(body)["error"]
    status = int(head.split(b" ")[1])
    if isinstance(error, dict):
        return status, error["code"], error["message"]
    name, _, message = error.partition(": ")
    return status, name, message


def status_lines(answer: bytes) -> list[bytes]:
    """The status of each answer in `answer`, in order."""
    return re.findall(rb"HTTP/1\.[01] (\d{3}) ", answer)  # (a body ends without a line break)
