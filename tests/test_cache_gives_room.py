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

from npu_worker.jobs.cache import SynthesisCache
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
    assert kept - set(cache.glob("*.wav"))


async def cache_filled_by_a_batch(client, tmp_path, state, small_disk):
    """A first batch's three sections in the cache, then the disk filled to the last byte: the cache's
    folder and the entries it kept."""
    first = [
        {"idx": i, "text": f"{i} " + "가" * 150, "output_path": str(tmp_path / f"a{i}.wav")} for i in range(3)
    ]
    await batch(client, first)
    cache = state / "cache"
    await until(lambda: len(list(cache.glob("*.wav"))) == 3, "the first batch's sections in the cache")
    kept = set(cache.glob("*.wav"))
    fill_leaving(small_disk, 0)
    return cache, kept


async def test_a_batch_on_a_state_disk_the_cache_filled_is_recorded(worker, tmp_path, small_disk):
    """The batch's record, the first thing written for it, found no room either: every batch was a 503
    `StateUnavailable` (nothing queued) while the cache held the disk."""
    state = small_disk / "state"
    client = await worker(engine=ToneEngine(), state_dir=str(state), cache_max_bytes=64 << 20)
    cache, kept = await cache_filled_by_a_batch(client, tmp_path, state, small_disk)
    events = await batch(client, [{"idx": 0, "text": "새 " + "나" * 150}])
    assert [e["status"] for e in events if e.get("event") == "progress"] == ["synth", "ok"], events
    assert kept - set(cache.glob("*.wav"))  # the room the record was written in


def test_a_write_that_found_no_room_while_another_made_it_is_tried_again(small_disk: Path):
    """Two writes on a full state disk at once (a batch's record on an admission thread, a section's wav
    on the finisher): the first to ask had the cache give up its room, and the other, whose write had
    failed before that, found nothing more to drop and failed too (a 503, or a section's WriteFailed)
    on a disk with room again. The interleaving is made by the first write itself."""
    cache = SynthesisCache(small_disk / "state" / "cache", 64 << 20)
    cache.prepare()
    for key in ("a", "b", "c"):
        cache.put(key, b"\0" * 200_000)
    out = small_disk / "out"
    out.mkdir()
    fill_leaving(small_disk, 0)

    def other_write() -> None:
        (out / "other.wav").write_bytes(b"\1" * 50_000)

    def write() -> None:
        try:
            (out / "s00.wav").write_bytes(b"\2" * 50_000)
        except OSError:  # before it asks for room: the other write fails, has the cache drop all, is done
            if not (out / "other.wav").exists():
                cache.making_room(str(out / "other.wav"), other_write, 50_000)
            raise

    cache.making_room(str(out / "s00.wav"), write, 50_000)
    assert (out / "s00.wav").read_bytes() == b"\2" * 50_000
    assert (out / "other.wav").read_bytes() == b"\1" * 50_000


async def test_a_cluster_nodes_default_output_on_a_disk_the_cache_filled_is_written(
    worker, redis_server, tmp_path, small_disk
):
    """The same on a `--queue redis://` node that writes its own job's files (`--role both`)."""
    state = small_disk / "state"
    client = await worker(
        engine=ToneEngine(),
        role="both",
        queue=redis_server.url,
        state_dir=str(state),
        cache_max_bytes=64 << 20,
    )
    cache, kept = await cache_filled_by_a_batch(client, tmp_path, state, small_disk)
    events = await batch(client, [{"idx": 0, "text": "새 " + "나" * 150}])
    ended = [e for e in events if e.get("event") in ("progress", "error") and e.get("status") != "synth"]
    assert [e["status"] for e in ended] == ["ok"], ended
    assert kept - set(cache.glob("*.wav"))


def test_a_small_write_on_a_full_disk_costs_the_cache_what_it_needs_not_every_entry(small_disk: Path):
    """A full disk had the cache drop every entry for any write, a batch's record of a few kB too: at
    the disk's capacity each put filled it again and the next write emptied the cache (a caller who
    fills the disk empties it for every caller at each write). The least recently used go first."""
    cache = SynthesisCache(small_disk / "state" / "cache", 64 << 20)
    cache.prepare()
    keys = [f"k{i}" for i in range(4)]
    for key in keys:
        cache.put(key, b"\0" * 100_000)
    out = small_disk / "out"
    out.mkdir()
    fill_leaving(small_disk, 0)
    target = out / "job.json"
    cache.making_room(str(target), lambda: target.write_bytes(b"{}" * 2_000), 4_000)
    assert target.read_bytes() == b"{}" * 2_000
    left = {path.stem for path in cache.directory.glob("*.wav")}
    assert left and left < set(keys) and keys[0] not in left, left
