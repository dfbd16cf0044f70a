"""A worker's JSON answer read up to a bound: `--base` may name any local server, and one that sends an
endless body, or a small gzip one that inflates to gigabytes, must end the run with a line, not fill
the bench's memory. aiohttp inflates as it reads, so the bound counts the bytes after decompression."""

from __future__ import annotations

import asyncio

import aiohttp

MAX_ANSWER_BYTES = 1 << 20  # as the player's /health bound: a /health is about 5 KiB, a /synth answer less


class AnswerTooLarge(ValueError):
    """The worker's answer went past MAX_ANSWER_BYTES (after decompression); read no further."""


async def bounded_text(response: aiohttp.ClientResponse, what: str, limit: int = MAX_ANSWER_BYTES) -> str:
    """The body of `response` as text, read up to `limit` bytes and no further (AnswerTooLarge past it)."""
    try:
        raw = await response.content.readexactly(limit + 1)
    except asyncio.IncompleteReadError as whole:  # the usual case: the body ended first
        raw = whole.partial
    if len(raw) > limit:
        raise AnswerTooLarge(f"{what} answered a body over {limit} bytes (decompressed): read no further")
    return raw.decode("utf-8", errors="replace")
