"""The one byte range a request asks of an answer whose bytes the worker sends itself (a section's
wav: a file or a copy from Redis), under the rules the player's files follow (`file_ranges.py`).

A section's audio was always the whole file, 200, whatever `Range` said: a media player seeking in a
long section, or a download resumed, fetched it all again. One range (`bytes=a-b`, `bytes=a-`,
`bytes=-n`; empty list elements are none, RFC 9110 §5.6.1) is now that range, 206; one past the end, or
`bytes=-0`, is 416 with `Content-Range: bytes */size`. Several ranges, a unit other than bytes, or any
`If-Range` (the answer carries no validator one could match, §13.1.5) are the whole file, 200. Pure code.
"""

from __future__ import annotations

import re

_UNIT = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=")  # a range unit (a token) and its `=`
_SPEC = re.compile(r"(\d*)-(\d*)", re.ASCII)


class Unsatisfiable(Exception):
    """No byte of the answer is in the range asked for (or the range does not parse): a 416."""


def asked_range(range_header: str | None, if_range: str | None, size: int) -> tuple[int, int] | None:
    """(first byte, bytes) of the one range asked of `size` bytes; None for the whole answer."""
    if range_header is None or if_range is not None:
        return None
    unit = _UNIT.match(range_header)
    if unit is None:
        raise Unsatisfiable
    if unit[1].lower() != "bytes":
        return None
    parts = [part.strip() for part in range_header[unit.end() :].split(",") if part.strip()]
    if len(parts) != 1:
        if not parts:
            raise Unsatisfiable
        return None  # several ranges: the whole answer
    spec = _SPEC.fullmatch(parts[0])
    if spec is None or spec[1] == spec[2] == "":
        raise Unsatisfiable
    if spec[1] == "":  # a suffix: the last n bytes
        suffix = int(spec[2])
        if suffix == 0 or size == 0:
            raise Unsatisfiable
        return max(0, size - suffix), min(suffix, size)
    first = int(spec[1])
    last = size - 1 if spec[2] == "" else min(int(spec[2]), size - 1)
    if spec[2] != "" and int(spec[2]) < first:
        raise Unsatisfiable
    if first >= size:
        raise Unsatisfiable
    return first, last - first + 1
