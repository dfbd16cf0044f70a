"""A section's staged wav gone between its pieces (a real redis-server; the key removed as its expiry or a
volatile-* eviction policy removes it: Redis full or refusing writes past the staging key's 600 s, or memory
short): the next piece's SETRANGE made the key anew, zeros up to its offset, of the wav's whole size, and
MADE/MADE_OK moved it in place as the section's wav: a file without its RIFF header logged `ok`. Now a piece
whose pieces before it went writes nothing (`StagedWavLost`) and the engine node uploads the wav again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from npu_worker.jobs.cluster import journal, wav_upload, writer
from npu_worker.jobs.cluster.wav_upload import StagedWavLost, new_upload, put_piece, staged_key
from tests.timing import seconds

TEXT = "a section of a few pieces " * 10  # the tone engine: ≈ 0.25 MB of wav, 4 pieces of 64 KiB


async def test_a_piece_whose_earlier_pieces_went_writes_nothing(jobs: Any) -> None:
    wav = b"RIFF" + bytes(range(256)) * 64
    key = staged_key("job1", 0, new_upload(len(wav)))
    await put_piece(jobs.redis, key, 0, wav[:4096])
    await put_piece(jobs.redis, key, 0, wav[:4096])  # (a retried piece: the same bytes again)
    await jobs.redis.delete(key)  # as its expiry or an eviction removes it
    with pytest.raises(StagedWavLost):
        await put_piece(jobs.redis, key, 4096, wav[4096:])
    assert await jobs.redis.exists(key) == 0


@pytest.mark.parametrize(
    "script", ["MADE (an engine node: the accepting node writes)", "MADE_OK (a both node)"]
)
async def test_a_staged_wav_gone_mid_upload_is_uploaded_again_never_handed_over_zero_filled(
    redis_server: Any, worker: Any, tmp_path: Path, monkeypatch: Any, script: str
) -> None:
    monkeypatch.setattr(wav_upload, "WAV_PIECE", 64 * 1024)  # (1 MiB in production)
    monkeypatch.setattr(writer, "WAV_PIECE", 64 * 1024)
    evicted: list[str] = []

    async def evicted_once_before_its_second_piece(redis: Any, key: str, offset: int, piece: bytes) -> None:
        if offset and not evicted:  # the staged key goes as a full Redis's eviction would take it
            evicted.append(key)
            await redis.delete(key)
        await put_piece(redis, key, offset, piece)

    monkeypatch.setattr(journal, "put_piece", evicted_once_before_its_second_piece)
    if script.startswith("MADE_OK"):
        node = await worker(role="both", state_dir=str(tmp_path / "both"), queue=redis_server.url)
    else:
        await worker(role="engine", state_dir=str(tmp_path / "engine"), queue=redis_server.url)
        node = await worker(role="api", state_dir=str(tmp_path / "api"), queue=redis_server.url)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": TEXT}]})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(60)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    finals = [e for e in events if e.get("status") in ("ok", "fail") or e["event"] == "done"]
    assert [(e["event"], e.get("status")) for e in finals] == [("progress", "ok"), ("done", None)], finals
    assert evicted, "the upload went in one piece: nothing was evicted between pieces"
    wav = Path(finals[0]["wav_path"]).read_bytes()
    assert wav[:4] == b"RIFF", wav[:16]
    audio = await node.get(f"/jobs/{job_id}/sections/0/audio")
    assert audio.status == 200 and await audio.read() == wav


@pytest.mark.parametrize(
    "script", ["MADE (an engine node: the accepting node writes)", "MADE_OK (a both node)"]
)
async def test_a_staged_wav_gone_at_every_upload_fails_its_section_by_name(
    redis_server: Any, worker: Any, tmp_path: Path, monkeypatch: Any, script: str
) -> None:
    """A Redis that evicts the staged copy at every upload (short of memory): the engine thread uploaded
    it again for ever, its section never ended, the node's shutdown waited on it. Now, after UPLOAD_TRIES
    uploads, the section fails with a `QueueUnavailable` saying so, and the job ends."""
    monkeypatch.setattr(wav_upload, "WAV_PIECE", 64 * 1024)
    uploads: list[str] = []

    async def evicted_before_each_second_piece(redis: Any, key: str, offset: int, piece: bytes) -> None:
        if offset and key not in uploads:
            uploads.append(key)
            await redis.delete(key)
        await put_piece(redis, key, offset, piece)

    monkeypatch.setattr(journal, "put_piece", evicted_before_each_second_piece)
    if script.startswith("MADE_OK"):
        node = await worker(role="both", state_dir=str(tmp_path / "both"), queue=redis_server.url)
    else:
        await worker(role="engine", state_dir=str(tmp_path / "engine"), queue=redis_server.url)
        node = await worker(role="api", state_dir=str(tmp_path / "api"), queue=redis_server.url)
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": TEXT}]})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(60)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    assert [(e["event"], e.get("status")) for e in events[-2:]] == [("error", "fail"), ("done", None)], events
    assert events[-2]["error"].startswith("QueueUnavailable: Redis lost the section's wav at each of 3 "), (
        events[-2]
    )
    assert len(uploads) == journal.UPLOAD_TRIES
