"""The synthesis cache gives up its room on a full state disk before a section's file fails for it.

walk33 (ZipVoice on the CPU, the state dir on a small disk): the cache had kept a lecture's wavs and
filled the disk, and every default output after that (`<state>/outputs/<job>/sNN.wav`) was an `error`,
`WriteFailed: … No space left on device`, while the cache, an aid, held the room."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.timing import until
from tests.tone_engine import ToneEngine

LEFT_FREE = 24 * 1024  # room for the second batch's record and log, not for its wav (≈ 144 kB)


@pytest.fixture
def small_disk(tmp_path: Path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)]).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def fill_leaving(disk: Path, free: int) -> None:
    """Fill `disk` up, then give back `free` bytes."""
    filler = disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as out:
        while True:
            out.write(b"\0" * 4096)
            out.flush()
    os.truncate(filler, max(0, filler.stat().st_size - free))


async def batch(client, sections: list[dict]) -> list[dict]:
    response = await client.post("/synth_batch", json={"sections": sections, "lang": "ko"})
    assert response.status == 200, await response.text()
    return [json.loads(line) async for line in response.content]


async def test_a_default_output_on_a_disk_the_cache_filled_is_written(worker, tmp_path, small_disk):
    state = small_disk / "state"
    client = await worker(engine=ToneEngine(), state_dir=str(state), cache_max_bytes=64 << 20)
    first = [
        {"idx": i, "text": f"{i} " + "가" * 150, "output_path": str(tmp_path / f"a{i}.wav")} for i in range(3)
    ]
    assert [e["status"] for e in await batch(client, first) if e.get("event") == "progress"][1::2] == [
        "ok"
    ] * 3
    cache = state / "cache"
    await until(lambda: len(list(cache.glob("*.wav"))) == 3, "the first batch's sections in the cache")
    kept = set(cache.glob("*.wav"))
    fill_leaving(small_disk, LEFT_FREE)
    events = await batch(client, [{"idx": 0, "text": "새 " + "나" * 150}])  # a default output: on the disk
    ended = [e for e in events if e.get("event") in ("progress", "error") and e.get("status") != "synth"]
    assert [e["status"] for e in ended] == ["ok"], ended
    assert Path(ended[0]["wav_path"]).stat().st_size > LEFT_FREE
    # the room it was written in (the new section's own entry may follow its `done`: not asked)
    assert not kept & set(cache.glob("*.wav"))


async def test_a_batch_on_a_state_disk_the_cache_filled_is_recorded(worker, tmp_path, small_disk):
    """The batch's record, the first thing written for it, found no room either: every batch was a 503
    `StateUnavailable` (nothing queued) while the cache held the disk."""
    state = small_disk / "state"
    client = await worker(engine=ToneEngine(), state_dir=str(state), cache_max_bytes=64 << 20)
    first = [
        {"idx": i, "text": f"{i} " + "가" * 150, "output_path": str(tmp_path / f"a{i}.wav")} for i in range(3)
    ]
    await batch(client, first)
    cache = state / "cache"
    await until(lambda: len(list(cache.glob("*.wav"))) == 3, "the first batch's sections in the cache")
    kept = set(cache.glob("*.wav"))
    fill_leaving(small_disk, 0)
    events = await batch(client, [{"idx": 0, "text": "새 " + "나" * 150}])
    assert [e["status"] for e in events if e.get("event") == "progress"] == ["synth", "ok"], events
    assert not kept & set(cache.glob("*.wav"))  # the room the record was written in
