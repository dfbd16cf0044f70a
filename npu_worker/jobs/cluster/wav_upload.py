"""A section's wav on its way into Redis in pieces: each piece a SETRANGE into a staging key of its own
(`staged_key`: one per upload, expiring), each within the command timeout; then MADE or MADE_OK moves
it to the section's key (RENAME) in the script's one step and records the upload's token in the job's
record (`wav:{idx}`), which the writer compares before and after its own piecewise read.

The whole wav as one argument of MADE needed 5.8 MB/s for 600 s of audio (28.8 MB) within the 5 s
timeout: over a slower link it timed out at every try and the engine thread's journal retried it for
ever (its section never ended, the engine took nothing else)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .keys import wav_key

# Bytes of a wav sent in one command: 1 MiB in the 5 s timeout is a link of 210 kB/s (as the writer's
# pieces, `writer.WAV_PIECE`).
WAV_PIECE = 1 << 20
# Seconds a staging key lives after its last piece: one left by a node that died mid-upload goes.
STAGED_SECONDS = 600


class StagedWavLost(Exception):
    """The staged copy was gone when the script came to move it (expired, evicted): upload it again."""


@dataclass(frozen=True)
class StagedWav:
    """An upload done: its token (the staging key's name, and the section's `wav:{idx}` once moved)."""

    token: str
    size: int


def new_upload(size: int) -> StagedWav:
    return StagedWav(secrets.token_hex(8), size)


def staged_key(job_id: str, idx: int, staged: StagedWav) -> str:
    return f"{wav_key(job_id, idx)}:up:{staged.token}"


def token_field(idx: int) -> str:
    """The job record's field with the token of the section's wav in Redis (`MADE`, `MADE_OK`)."""
    return f"wav:{idx}"


# KEYS: staged  ARGV: offset, piece, seconds  → 1, or 0: the pieces before this one are gone (nothing written)
PUT_PIECE = """
if ARGV[1] ~= '0' and redis.call('STRLEN', KEYS[1]) < tonumber(ARGV[1]) then return 0 end
redis.call('SETRANGE', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


async def put_piece(redis: Any, key: str, offset: int, piece: bytes | memoryview) -> None:
    """One piece at its place (SETRANGE: a retried piece writes the same bytes again), and the key's
    expiry pushed back; `StagedWavLost` where the pieces before it went (expired, evicted: a Redis full
    or refusing writes past STAGED_SECONDS, a volatile-* eviction policy): SETRANGE made the key anew,
    zeros up to the offset, of the wav's size, and MADE moved it in place as the section's wav, `ok`."""
    script = redis.register_script(PUT_PIECE)
    if not int(await script(keys=[key], args=[offset, piece, STAGED_SECONDS])):
        raise StagedWavLost(f"{key}: its pieces before byte {offset} went before the rest came")


def pieces(wav: bytes) -> Iterator[tuple[int, memoryview]]:
    """The wav's pieces, each a view into it made as it is sent (redis-py sends a memoryview as it is):
    slices of it, all made first, were a copy of the whole wav per upload in flight (28.8 MB for 600 s)."""
    whole = memoryview(wav)
    for offset in range(0, len(wav), WAV_PIECE):
        yield offset, whole[offset : offset + WAV_PIECE]


async def staged(redis: Any, job_id: str, idx: int, wav: bytes | StagedWav) -> StagedWav:
    """`wav` uploaded (on the loop, a piece a command), or the upload already done (the engine thread's,
    a piece a retried call: `RedisJournal`)."""
    if isinstance(wav, StagedWav):
        return wav
    upload = new_upload(len(wav))
    for offset, piece in pieces(wav):
        await put_piece(redis, staged_key(job_id, idx, upload), offset, piece)
    return upload
