"""The one byte range a request asks of an answer whose bytes the worker sends itself (a section's
wav: a file or a copy from Redis), read as the player's files read theirs (`file_ranges.py`, whose
list rules live here so the two cannot drift apart).

A section's audio was always the whole file, 200, whatever `Range` said: a media player seeking in a
long section, or a download resumed, fetched it all again. One range (`bytes=a-b`, `bytes=a-`,
`bytes=-n`; empty list elements are none, RFC 9110 §5.6.1) is now that range, 206; one past the end, or
`bytes=-0`, is 416 with `Content-Range: bytes */size`. Several ranges, a unit other than bytes, or any
`If-Range` (the answer carries no validator one could match, §13.1.5) are the whole file, 200. The one
range itself is read with aiohttp's pattern (`bytes=` then digits, no spaces), as `FileResponse` reads
the player's: `bytes= 0-1` was served here and refused there, and a number past Python's 4 300 digits
(an 8 KiB header holds 8 000) was a 500 here, a 416 there. Pure code.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multidict import MultiMapping

# A range unit (a token) and its `=`, spaces allowed around them only to tell a unit (the range itself
# must not have them, as aiohttp's pattern says).
_UNIT = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=")
_ONE = re.compile(r"bytes=(\d*)-(\d*)", re.ASCII | re.IGNORECASE)  # aiohttp's `http_range` pattern


class Unsatisfiable(Exception):
    """No byte of the answer is in the range asked for (or the range does not parse): a 416."""


def range_field(headers: MultiMapping[str]) -> str | None:
    """The request's one `Range` field; None (the whole answer) where none came or several did:
    `Range` is no list (RFC 9110 §5.3), so two are read as several ranges, where the first was served
    (a proxy that reads the last one meant other bytes)."""
    given = headers.getall("Range", [])
    return given[0] if len(given) == 1 else None


def one_range(asked: str) -> str | None:
    """`asked` read once: the one range to serve, empty list elements dropped (`bytes=0-1,`, `bytes=,0-1`
    and `bytes=0-1, ` ask for bytes 0-1, §5.6.1, which aiohttp's pattern refused as 416); None where the
    whole answer is sent instead (a unit other than bytes, several ranges); anything else as it is (a
    range that does not parse stays one: 416)."""
    unit = _UNIT.match(asked)
    if unit is None:
        return asked
    parts = [part.strip() for part in asked[unit.end() :].split(",") if part.strip()]
    if unit[1].lower() != "bytes" or len(parts) > 1:
        return None
    return asked[: unit.end()] + parts[0] if parts and "," in asked else asked


def asked_range(range_header: str | None, if_range: str | None, size: int) -> tuple[int, int] | None:
    """(first byte, bytes) of the one range asked of `size` bytes; None for the whole answer."""
    if range_header is None or if_range is not None:
        return None
    one = one_range(range_header)
    if one is None:
        return None  # another unit, or several ranges: the whole answer
    spec = _ONE.fullmatch(one)
    if spec is None or spec[1] == spec[2] == "":
        raise Unsatisfiable
    try:
        first, last = (int(spec[1]) if spec[1] else None), (int(spec[2]) if spec[2] else None)
    except ValueError:  # past sys.int_max_str_digits: aiohttp's `http_range` raises the same, a 416
        raise Unsatisfiable from None
    if first is None:  # a suffix: the last n bytes
        assert last is not None
        if last == 0 or size == 0:
            raise Unsatisfiable
        return max(0, size - last), min(last, size)
    if last is not None and last < first:
        raise Unsatisfiable
    if first >= size:
        raise Unsatisfiable
    end = size - 1 if last is None else min(last, size - 1)
    return first, end - first + 1
