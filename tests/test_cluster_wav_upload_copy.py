"""A long section's wav uploaded in pieces (`wav_upload.staged`, a real redis-server): the pieces were slices of
the wav (`wav[offset : offset + WAV_PIECE]`), all made before the first was sent, a copy of the whole wav per
upload in flight (28.8 MB for 600 s of audio). Now each piece is a view into the wav, sent as it is made: what
the upload allocates stays within a few pieces, whatever the wav's length. Measured with `tracemalloc` (bytes,
not time), and the staged copy read back whole, byte for byte."""

from __future__ import annotations

import os
import tracemalloc
from typing import Any

from npu_worker.jobs.cluster import wav_upload
from npu_worker.jobs.cluster.store import RedisJobs

PIECES = 12  # a wav of this many pieces: its own copy would be twelve pieces' worth
ROOM = 4  # pieces the upload may hold at once (one in flight, its framing, redis-py's and asyncio's buffers)


async def test_a_long_wav_is_uploaded_without_a_copy_of_it(redis_server: Any) -> None:
    wav = os.urandom(PIECES * wav_upload.WAV_PIECE + 123)
    store = RedisJobs(redis_server.url)
    try:
        await store.redis.ping()  # the connection made before the measure
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            up = await wav_upload.staged(store.redis, "job1", 0, wav)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        stored = await store.redis.get(wav_upload.staged_key("job1", 0, up))
    finally:
        await store.close()
    assert stored == wav
    assert up.size == len(wav)
    assert peak < ROOM * wav_upload.WAV_PIECE, f"the upload held {peak} bytes for a wav of {len(wav)}"


def test_the_pieces_cover_the_wav_in_order_each_within_the_piece_size() -> None:
    wav = bytes(range(256)) * ((2 * wav_upload.WAV_PIECE) // 256 + 1)
    pieces = list(wav_upload.pieces(wav))
    assert [offset for offset, _ in pieces] == list(range(0, len(wav), wav_upload.WAV_PIECE))
    assert all(len(piece) <= wav_upload.WAV_PIECE for _, piece in pieces)
    assert b"".join(bytes(piece) for _, piece in pieces) == wav
    assert list(wav_upload.pieces(b"")) == []
