"""The player's files with RFC 9110's range rules where aiohttp's `FileResponse` bends them:
`Range: bytes=-0` (a suffix of no bytes, unsatisfiable, §14.1.2) was served as the whole file with 206,
and an `If-Range` aiohttp could not read as a date (an entity tag, or neither) was dropped, so the range
was served though the validator did not (or could not) say the file is the one the caller holds part of
(§13.1.5): it answers with the whole file, 200. `If-Range` with a strong tag is compared with the file's
ETag (aiohttp's, `mtime_ns-size` in hex); one with a date must be the file's `Last-Modified` exactly
(§13.1.5; aiohttp took any later date, so the bytes of a file replaced by an older one were served as a
range of the copy the caller held). A range in a unit other than bytes is ignored (§14.2: the whole
file, 200; aiohttp answered 416), and so is a request for several ranges (`bytes=0-1,3-4`; §14.2 lets a
server ignore one, and no multipart/byteranges answer is built: aiohttp answered 416, which a caller that
asks for several, as a media player may, read as a file of no such bytes). One range among empty list
elements (`bytes=0-1,`: §5.6.1 says they are none) is that range (aiohttp's pattern refused it, 416).
Two `Range` or two `If-Range` fields are the whole file, 200 (neither is a list).
Every 416 is shaped as a section's wav's, after the preconditions (304, 412) as aiohttp answers them."""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from multidict import CIMultiDict

from .byte_range import Unsatisfiable, asked_range, one_range, range_field

_STRONG_TAG = re.compile(r'"[\x21\x23-\x7e\x80-\xff]*"')  # RFC 9110 §8.8.3; `W/"…"` is weak
_DROPPED = ("Range", "If-Range")
_REFUSED = "bytes=x"  # a range aiohttp's pattern refuses: its 416, after its preconditions (304, 412)


async def file_answer(request: web.Request, path: Path, headers: Mapping[str, str]) -> web.StreamResponse:
    """`path` answered to `request` (`headers` on any answer): the file, a range of it, or 416."""
    info = await asyncio.to_thread(os.stat, path)
    asked = range_field(request.headers)  # (an empty `Range` is one that does not parse, not none)
    one = None if asked is None else one_range(asked)  # read once (`byte_range.py`: a section's wav alike)
    if one is None or not _range_applies(request, info):
        return _WholeFile(path, headers=headers)
    if _unsatisfiable(one, info.st_size):  # (`bytes=-0` too, which aiohttp served whole as 206)
        # (a precondition still comes first, RFC 9110 §13.2.2: `bytes=-0`'s 416 came before a 304)
        return _OneRange(_REFUSED, path, headers=headers)
    if one != asked:
        return _OneRange(one, path, headers=headers)
    return _RangedFile(path, headers=headers)


def _unsatisfiable(one: str, size: int) -> bool:
    """Whether the one range asked for has no byte of `size` (`bytes=-0` none of any size), or does
    not parse: a 416, by the rules a section's wav is answered with."""
    try:
        asked_range(one, None, size)
    except Unsatisfiable:
        return True
    return False


def _range_applies(request: web.Request, info: os.stat_result) -> bool:
    """Whether the one range asked for is to be served: `If-Range` (if any) a strong tag naming this
    file or its `Last-Modified` date (aiohttp's: the mtime rounded up to the second); anything else is
    not (a weak tag, another date, a value that does not parse, two `If-Range` fields: it is no list,
    RFC 9110 §13.1.5, so two name no one file; the first was taken, where two `Range` fields were the
    whole file)."""
    given = request.headers.getall("If-Range", [])
    if not given or "Range" not in request.headers:
        return True
    if len(given) > 1:
        return False
    if_range = given[0]
    if _STRONG_TAG.fullmatch(if_range.strip()):
        return if_range.strip() == f'"{info.st_mtime_ns:x}-{info.st_size:x}"'
    date = request.if_range
    return date is not None and date.timestamp() == math.ceil(info.st_mtime)


class _RangedFile(web.FileResponse):
    """The file under a range: aiohttp's 416, once its preconditions held, shaped as a section's wav's
    (it was chunked, a `Content-Type` over no bytes and no `Accept-Ranges`): no body, no `Content-Type`,
    `Accept-Ranges` and its `Content-Range`. aiohttp sets the 416 through `set_status`."""

    def set_status(self, status: int, reason: str | None = None) -> None:
        super().set_status(status, reason)
        if status == 416:
            self.headers.pop("Content-Type", None)
            self.headers["Accept-Ranges"] = "bytes"
            self.content_length = 0


class _WholeFile(web.FileResponse):
    """The file, as if no range were asked for (200), its other conditions still kept."""

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        kept = CIMultiDict(
            (name, value) for name, value in request.headers.items() if name.title() not in _DROPPED
        )
        return await super().prepare(request.clone(headers=kept))


class _OneRange(_RangedFile):
    """The file's range `Range: one` (the caller's range-set less its empty elements), conditions kept."""

    def __init__(self, one: str, path: Path, headers: Mapping[str, str]) -> None:
        super().__init__(path, headers=headers)
        self._one = one

    async def prepare(self, request: web.BaseRequest) -> AbstractStreamWriter | None:
        kept = CIMultiDict(request.headers)
        kept["Range"] = self._one
        return await super().prepare(request.clone(headers=kept))
