"""A section run again (a peer took it over from a node only slow) while the accepting node's writer reads
the first run's wav in pieces (a real redis-server, a real worker; the second run's hand-over is the real
MADE, sent once the writer has read its first piece). The writer read on from where it was in the second
run's wav: a file of the first run's head and the second's tail, logged `ok`, until the second run's own
entry wrote it again. Now a wav that came from another upload by the end of the read is left to that
run's entry: every file written is one run's wav."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster import writer
from npu_worker.jobs.cluster.keys import job_key
from npu_worker.jobs.cluster.store import RedisJobs
from tests.test_cluster_writer_poison import COUNTS, logged_events
from tests.timing import seconds

PIECE = 64 * 1024
META = {"duration": 1, "elapsed": 1, "cached": False}


async def test_a_section_made_again_mid_read_never_writes_a_file_of_two_wavs(
    worker: Any, redis_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(writer, "WAV_PIECE", PIECE)  # (1 MiB in production)
    first_run = b"RIFF" + b"\x01" * (3 * PIECE)
    second_run = b"RIFF" + b"\x02" * (3 * PIECE)  # the same length: nothing in its size tells them apart
    written: list[bytes] = []
    write = writer.OutputWriter._write

    def recorded(self: writer.OutputWriter, job_id: str, path: str, wav: bytes) -> None:
        written.append(wav)
        write(self, job_id, path, wav)

    read = RedisJobs.spec_and_audio
    made_again: list[bool] = []

    async def then_made_again(self: RedisJobs, job_id: str, idx: int, **kwargs: Any) -> Any:
        found = await read(self, job_id, idx, **kwargs)
        if not made_again:  # the first run's first piece is read: the second run hands over
            made_again.append(await self.made(job_id, name, idx, second_run, META))
        return found

    monkeypatch.setattr(writer.OutputWriter, "_write", recorded)
    monkeypatch.setattr(RedisJobs, "spec_and_audio", then_made_again)
    state = tmp_path / "node"
    node = await worker(role="both", state_dir=str(state), queue=redis_server.url)
    name = node.app[SCHEDULER_KEY].node
    output = state / "outputs" / "rerun" / "section_0.wav"  # a default output: the node's own folder
    section = {"idx": 0, "text": "rerun", "output_path": str(output)}
    spec = {"id": "rerun", "node": "x", "params": {}, "sections": [section], "preview": False}
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await planter.hset(
            job_key("rerun"), mapping={**COUNTS, "spec": json.dumps({**spec, "created_at": 0})}
        )
        hand_over = RedisJobs(redis_server.url)  # the first run's engine node
        try:
            assert await hand_over.made("rerun", name, 0, first_run, META)
        finally:
            await hand_over.close()
        async with asyncio.timeout(seconds(60)):  # its section ended (no event says so here: polled)
            while len(await logged_events(planter, "rerun")) < 2:
                await asyncio.sleep(0.05)
        events = await logged_events(planter, "rerun")
    assert made_again == [True]
    assert [(e["event"], e.get("status")) for e in events] == [("progress", "ok"), ("done", None)], events
    assert written and all(wav in (first_run, second_run) for wav in written), [
        w[:8] + w[-4:] for w in written
    ]
