"""Helpers for the tests of request bodies on a real socket (no tests here): the lecture batch a real
caller sends, and a raw request's one answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.timing import seconds

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"  # shipped copy
KIB = 1024


def lecture_batch() -> bytes:
    """The 39-slide lecture, each slide's text repeated to near --max-text-chars: about 320 KiB of
    JSON (ASCII-escaped, as `json.dumps` writes it), the size of a real batch with long slides."""
    lecture = json.loads(LECTURE.read_text(encoding="utf-8"))
    for section in lecture["sections"]:
        text = section["text"]
        section["text"] = (text + " ") * (1900 // (len(text) + 1))
    return json.dumps(lecture).encode()


async def answer_of(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str], dict]:
    """The status line, headers and JSON body of the one answer the server sends, then closes."""
    async with asyncio.timeout(seconds(10)):
        raw = await reader.read()
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode().split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return status.encode(), headers, json.loads(body)


async def raw_answer(port: int, request: bytes) -> tuple[bytes, dict[str, str], dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    try:
        return await answer_of(reader)
    finally:
        writer.transport.abort()
