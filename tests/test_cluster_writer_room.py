"""A node's writer on a state disk its synthesis cache filled (a real redis-server, two nodes in process,
a 1 MiB tmpfs): a section another node ran, whose default output this node writes, failed
`WriteFailed: … No space left on device` while the cache held the room, where the single-node runner,
and a `both` node's engine for its own jobs, have the cache give it up (`SynthesisCache.making_room`).
Now the writer does as they do."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from npu_worker.jobs.cache import SynthesisCache
from tests.test_cache_gives_room import batch, fill_leaving, small_disk
from tests.tone_engine import ToneEngine

__all__ = ["small_disk"]  # (the fixture, used by name)


def cache_kept_before(state: Path) -> set[Path]:
    """Entries the node's cache kept from before (a run as a `both` node): 600 kB of the 1 MiB disk."""
    cache = SynthesisCache(state / "cache", 64 << 20)
    cache.prepare()
    for key in ("a", "b", "c"):
        cache.put(key, b"\0" * 200_000)
    return set((state / "cache").glob("*.wav"))


async def test_a_default_output_the_writer_writes_on_a_disk_the_cache_filled_is_written(
    worker: Any, redis_server: Any, tmp_path: Path, small_disk: Path
) -> None:
    state = small_disk / "state"
    kept = await asyncio.to_thread(cache_kept_before, state)
    cluster = {"queue": redis_server.url, "cache_max_bytes": 64 << 20}
    await worker(engine=ToneEngine(), role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    api = await worker(engine=ToneEngine(), role="api", state_dir=str(state), **cluster)
    await asyncio.to_thread(fill_leaving, small_disk, 0)
    events = await batch(api, [{"idx": 0, "text": "새 " + "나" * 150}])  # a default output: on the disk
    ended = [e for e in events if e.get("event") in ("progress", "error") and e.get("status") != "synth"]
    assert [e["status"] for e in ended] == ["ok"], ended
    assert Path(ended[0]["wav_path"]).is_relative_to(state)
    assert kept - set(await asyncio.to_thread(lambda: list((state / "cache").glob("*.wav"))))  # its room
