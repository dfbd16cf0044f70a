"""A 2xx answer whose body is no JSON object (a proxy's or captive portal's page, a misrouted base URL)
is a WorkerProtocolError naming the status and the content type, from both clients: it was read as the
worker's error body, so `synth` returned a failed synthesis with the page's first bytes as its error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from npu_worker import client
from npu_worker.client import WorkerProtocolError, aio
from tests.rogue_worker import RogueWorker
from tests.timing import seconds

PAGE = b"<html><body>Sign in to the network</body></html>"


def page(status: int, body: bytes, content_type: str) -> bytes:
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body


async def synth(base: str, use_async: bool, tmp_path: Any) -> dict[str, Any]:
    options = {"base": base, "timeout": seconds(10)}
    async with asyncio.timeout(seconds(10)):
        if use_async:
            return await aio.synth("hi", tmp_path / "a.wav", **options)
        return await asyncio.to_thread(client.synth, "hi", tmp_path / "a.wav", **options)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("status", "body", "content_type"),
    [(200, PAGE, "text/html"), (200, b'["ok"]', "application/json"), (201, b"", "text/plain")],
    ids=["html", "json-list", "empty"],
)
async def test_a_2xx_that_is_no_json_object_is_a_protocol_error(
    use_async, tmp_path, status, body, content_type
):
    async with RogueWorker(lambda method, path: page(status, body, content_type)) as rogue:
        with pytest.raises(WorkerProtocolError) as refused:
            await synth(rogue.base, use_async, tmp_path)
    said = str(refused.value)
    assert f"POST {rogue.base}/synth: HTTP {status}" in said and f"Content-Type: {content_type}" in said, said
    assert rogue.requests == [("POST", "/synth")]  # sent once: the worker may have written the file


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
async def test_a_refusal_that_is_no_json_is_still_its_status(use_async, tmp_path):
    """A 5xx page is a refusal as before: WorkerHTTPError with its words (a 502 or 504 is a gateway's,
    an `AnswerCut`: tests/test_client_gateway_timeout.py)."""
    async with RogueWorker(lambda method, path: page(500, PAGE, "text/html")) as rogue:
        with pytest.raises(client.WorkerHTTPError) as refused:
            await synth(rogue.base, use_async, tmp_path)
    assert refused.value.status == 500 and "Sign in" in refused.value.body["error"]
