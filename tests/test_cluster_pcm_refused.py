"""A streaming job's PCM sent while Redis refuses every write for a moment (a real redis-server made a
replica of no one: READONLY, as when a replica is promoted or demoted): the sender read the refusal as
a key not of ours and dropped the entries, an ERROR each batch, and the listeners heard a gap (their
job ended short of its audio). Now the entries wait, as for an outage, and go out once Redis takes
writes again, the refusal said once as it starts and once as it ends."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import numpy as np

from npu_worker.jobs.cluster.keys import pcm_key
from npu_worker.jobs.cluster.pcm_stream import PcmPublisher
from npu_worker.jobs.model import AudioChunk
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds


async def test_pcm_sent_while_redis_refuses_writes_waits_and_goes_out_after(
    jobs: Any, redis_server: Any, caplog: Any
) -> None:
    caplog.set_level(logging.INFO, logger="npu_worker.jobs.cluster")
    publisher = PcmPublisher(jobs)
    sender = publisher.start()
    master = dead_port()  # held: no other test's server can take the port and be copied
    redis_server.command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
    try:
        for number in range(3):
            publisher.put(("job", 0, "attempt", AudioChunk(0, np.full(160, number, dtype=np.float32))))
        publisher.put(("job", 0, "attempt", None))
        async with asyncio.timeout(seconds(20)):  # the sender met the refusal (its log says so: polled)
            while "PCM stream" not in caplog.text:
                await asyncio.sleep(0.05)
    finally:
        redis_server.command("REPLICAOF", "NO", "ONE")
    async with asyncio.timeout(seconds(20)):
        await publisher.flushed()
    sender.cancel()
    entries = await jobs.redis.xrange(pcm_key("job"))
    assert [int(fields[b"i"]) for _, fields in entries] == [0, 1, 2, 3], entries
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == [], caplog.text
    assert "PCM stream: Redis takes writes again" in caplog.text, caplog.text
    master.close()
