"""A finished section's wav in Redis as a file the route sends in pieces: each piece read with GETRANGE
when the caller has taken the one before, not the whole wav fetched first. A caller that reads slowly
(or not at all) held Redis's whole copy (tens of MB for a long section), a copy per connection.

For threads (the route reads a file off the loop): each read hops onto the loop (`RedisJournal.call`).
A key removed meanwhile (retention) reads as the end: the route's answer is cut, as for a file cut
short in place.
"""

from __future__ import annotations

import io
from typing import BinaryIO

from .journal import RedisJournal
from .keys import wav_key
from .store import RedisJobs


class RedisWav(io.RawIOBase):
    """Redis's copy of one section's wav, read by ranges; `size` is its length when it was looked up."""

    def __init__(self, journal: RedisJournal, jobs: RedisJobs, job_id: str, idx: int, size: int) -> None:
        super().__init__()
        self._journal, self._jobs, self._key = journal, jobs, wav_key(job_id, idx)
        self._size, self._position = size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        wanted = min(len(buffer), self._size - self._position)
        if wanted <= 0:
            return 0
        first, last = self._position, self._position + wanted - 1
        piece = self._journal.call(lambda: self._jobs.redis.getrange(self._key, first, last))
        buffer[: len(piece)] = piece
        self._position += len(piece)
        return len(piece)


async def open_redis_wav(journal: RedisJournal, jobs: RedisJobs, job_id: str, idx: int) -> BinaryIO | None:
    """The section's wav in Redis, to be read in pieces (on the loop: its length only); None if none."""
    size = await jobs.redis.strlen(wav_key(job_id, idx))
    return io.BufferedReader(RedisWav(journal, jobs, job_id, idx, size)) if size else None
