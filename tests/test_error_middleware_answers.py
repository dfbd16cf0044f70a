"""The error middleware's answers to what a handler raised, word for word and in the body's key order
(http_compat/errors.py): a chunked body past `--max-body-bytes` (aiohttp's 413, raised mid-read), no
such path (404), a refused WebSocket handshake (aiohttp's 400, its `Sec-WebSocket-Version` kept)."""

from __future__ import annotations

from collections.abc import AsyncIterator

REFUSAL_KEYS = ["status", "error", "traceback", "fallback"]  # PROTOCOL §1's error body, in its order


async def _pieces(count: int, size: int) -> AsyncIterator[bytes]:
    for _ in range(count):
        yield b" " * size


async def test_a_chunked_body_past_the_limit_is_a_413_naming_the_limit(worker):
    client = await worker(max_body_bytes=1000)
    answer = await client.post("/synth", data=_pieces(4, 400))  # no Content-Length: refused while read
    assert answer.status == 413
    body = await answer.json()
    assert body == {
        "status": "fail",
        "error": "BodyTooLarge: the body exceeds 1000 bytes",
        "traceback": None,
        "fallback": None,
    }
    assert list(body) == REFUSAL_KEYS


async def test_no_such_path_is_a_404_naming_the_method_and_path(worker):
    client = await worker()
    answer = await client.get("/nope/%FF")
    assert answer.status == 404
    body = await answer.json()
    assert body["error"] == "BadRequest: no such endpoint: GET /nope/%FF" and list(body) == REFUSAL_KEYS


async def test_a_refused_websocket_handshake_is_a_400_in_the_error_body_with_the_version_asked(worker):
    client = await worker()
    asked = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Version": "8",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    answer = await client.get("/ws", headers=asked)
    assert answer.status == 400 and answer.headers["Sec-WebSocket-Version"] == "13"
    body = await answer.json()
    said = "invalid WebSocket handshake: Sec-WebSocket-Version '8' is not supported (13 is)"
    assert body["error"] == f"BadRequest: {said}" and list(body) == REFUSAL_KEYS
