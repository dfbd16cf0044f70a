"""The two answers of the OpenAI routes that had no `x-request-id`: the speech stream socket's 101 (its
head went out when the socket opened, before the handler's wrapper could name it) and a CORS preflight's
204 (answered by the CORS middleware, before any handler). Every other answer of these routes carries
one (docs/protocol.md), so a caller logging ids had a hole exactly where a socket or a page began."""

from __future__ import annotations

import asyncio
import base64
import os
import re

import pytest

from tests.timing import seconds

OWN_ID = re.compile(r"req_[0-9a-f]{16}")


async def head_of(port: int, request: bytes) -> tuple[int, dict[str, str]]:
    """The status and headers of the answer to `request`, read up to the blank line on a real socket."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(seconds(20)):
            head = await reader.readuntil(b"\r\n\r\n")
    finally:
        writer.close()
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers


def upgrade_request(path: str) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


async def test_the_stream_sockets_upgrade_carries_a_request_id_of_its_own(worker):
    client = await worker()
    seen = set()
    for _ in range(2):
        status, headers = await head_of(client.port, upgrade_request("/v1/audio/speech/stream"))
        assert status == 101
        assert OWN_ID.fullmatch(headers.get("x-request-id", "")), headers
        seen.add(headers["x-request-id"])
    assert len(seen) == 2  # one per socket


@pytest.mark.parametrize("path", ["/v1/audio/speech", "/v1/models", "/audio/speech"])
async def test_a_preflight_of_an_openai_route_carries_a_request_id(worker, path):
    client = await worker()
    request = (
        f"OPTIONS {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:5173\r\n"
        "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    status, headers = await head_of(client.port, request)
    assert status == 204
    assert headers["access-control-allow-origin"] == "http://localhost:5173"
    assert OWN_ID.fullmatch(headers.get("x-request-id", "")), headers


async def test_a_native_routes_answers_stay_without_one(worker):
    """The id is the OpenAI surface's (its SDKs read it); the native routes never had one."""
    client = await worker()
    request = (
        b"OPTIONS /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:5173\r\n"
        b"Access-Control-Request-Method: POST\r\nConnection: close\r\n\r\n"
    )
    status, headers = await head_of(client.port, request)
    assert status == 204 and "x-request-id" not in headers
    status, headers = await head_of(client.port, upgrade_request("/ws"))
    assert status == 101 and "x-request-id" not in headers
