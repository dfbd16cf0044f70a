"""A batch's record on a state disk the synthesis cache filled is written, not refused.

contract62: the section's wav got one more try once the cache gave up its room (walk33), the job's
record (`jobs/<id>/job.json`, written before the batch is queued) did not: every batch on such a disk
was a 503 `StateUnavailable` while the cache, an aid, held the room."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cache_gives_room import cache_filled_by_a_batch, small_disk  # noqa: F401 - the fixture
from tests.tone_engine import ToneEngine


async def test_a_batch_record_on_a_disk_the_cache_filled_is_written(worker, tmp_path, small_disk):  # noqa: F811
    state = small_disk / "state"
    client = await worker(engine=ToneEngine(), state_dir=str(state), cache_max_bytes=64 << 20)
    cache, kept = await cache_filled_by_a_batch(
        client, tmp_path, state, small_disk
    )  # not even room for a record
    text = "새 " + "나" * 150
    response = await client.post(
        "/synth_batch",
        json={"sections": [{"idx": 0, "text": text, "output_path": str(tmp_path / "b.wav")}], "lang": "ko"},
    )
    assert response.status == 200, await response.text()
    events = [json.loads(line) async for line in response.content]
    ended = [e for e in events if e.get("event") in ("progress", "error") and e.get("status") != "synth"]
    assert [e["status"] for e in ended] == ["ok"], ended
    assert Path(tmp_path / "b.wav").stat().st_size > 0
    # room given up: the least recently used entries, as much as the writes needed (not every entry)
    assert kept - set(cache.glob("*.wav"))
