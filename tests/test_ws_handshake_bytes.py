"""A WebSocket handshake whose headers hold bytes aiohttp cannot handle: a `Sec-WebSocket-Key` that is
not ASCII, an Upgrade or Connection header holding a byte that is not UTF-8 (aiohttp's refusal, quoting
it, could not be encoded). Each was a 400 in Python's words ("string argument should contain only ASCII
characters", "'utf-8' codec can't encode characters ..."), naming no header: it names the header."""

from __future__ import annotations

import pytest

from tests.raw_http import raw_exchange, refusal_of
from tests.timing import seconds

KEY = b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"


@pytest.mark.parametrize("path", [b"/ws", b"/v1/audio/speech/stream"])
@pytest.mark.parametrize(
    ("headers", "said"),
    [
        (
            b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \xc3\xa9\xc2\x9b\xff\r\n",
            "invalid WebSocket handshake: Sec-WebSocket-Key 'é\\x9b\\udcff' is not 16 bytes in base64",
        ),
        (
            b"Upgrade: web\xffsocket\r\nConnection: Upgrade\r\n" + KEY,
            "invalid WebSocket handshake: the Upgrade header does not say websocket",
        ),
        (
            b"Upgrade: websocket\r\nConnection: \xff\r\n" + KEY,
            "invalid WebSocket handshake: the Connection header does not say Upgrade",
        ),
    ],
)
async def test_a_handshake_header_aiohttp_cannot_read_is_named(served, path, headers, said):
    listener = await served()
    request = b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nSec-WebSocket-Version: 13\r\n" + headers
    answer = await raw_exchange(listener.port, request + b"Connection: close\r\n\r\n", seconds(5))
    assert refusal_of(answer) == (400, "BadRequest", said)
