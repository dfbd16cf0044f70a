"""A piece of a connection's bytes handed to aiohttp's parser cut after each blank line
(`connection_guard.GuardedHandler`).

Why: aiohttp's parser drops the requests it completed in a piece once a later one in that piece is
malformed (its error alone is queued): a valid request and a malformed one sent in one write got the 400
alone, the first never run and its caller reading the 400 as its answer. Cut after each blank line (at
most SPLITS_PER_PIECE), the requests before the fault are queued before its error; the parser reads
pieces as one stream, so a body cut there (a multipart part's headers) reads the same. Nothing after a
refusal is parsed: the connection closes after it, and the parser, refusing every later cut again, had
the last cut's request (a /v1/ one, an HTTP/1.0 one) pick the shape and version of the first's refusal.
"""

from __future__ import annotations

from collections.abc import Callable

# Header ends a piece is cut at before aiohttp parses it: a batch of pipelined requests in one write
# longer than this loses those before the cut again if a later one is malformed.
SPLITS_PER_PIECE = 32

# (data, start, end) → True where the parser refused what it was given of data[start:end]
Feed = Callable[[bytes, int, int], bool]


def feed_in_cuts(data: bytes, feed: Feed) -> None:
    """Give `data` to `feed` a request's headers at a time, stopping at the first refusal."""
    start = 0
    for _ in range(SPLITS_PER_PIECE):
        end = data.find(b"\r\n\r\n", start) + 4
        if end < 4 or end >= len(data):
            break
        if feed(data, start, end):
            return
        start = end
    feed(data, start, len(data))
