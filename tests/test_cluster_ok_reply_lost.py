"""An accepting node's `ok` (FINAL) that Redis applies but whose reply never comes (a real redis-server behind a
real TCP proxy that forwards the command and holds back every reply after it on that connection: the reply
lost, as on a link that dies after the write), three times: the writer reads the entry again, times out on
its own reply while Redis answers a PING, and after `SLOW_ENTRY_TRIES` fails the section `InternalError`.
Suspected: that `error` logged after the applied `ok`, both for one section. Verified not so: FINAL logs one
final event per section, so the `error` is dropped: the section's one final event is its `ok` (a job of two
sections: one whose job had ended meanwhile is dropped before FINAL). The writer's log said `its section is
failed` all the same; now it says the section had ended already."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster import scripts
from npu_worker.jobs.cluster.keys import job_key, ready_key, wav_key
from tests.redis_proxy import redis_through
from tests.test_cluster_wav_upload import command_end
from tests.test_cluster_writer_poison import COUNTS, logged_events
from tests.timing import seconds


async def _proxy(client_in: Any, client_out: Any, redis_port: int, pumps: set[asyncio.Task[None]]) -> None:
    redis_in, redis_out = await asyncio.open_connection("127.0.0.1", redis_port)
    lost = asyncio.Event()  # an `ok` was sent: no reply on this connection comes any more

    async def requests() -> None:
        waiting = bytearray()
        with contextlib.suppress(OSError):
            while data := await client_in.read(65536):
                waiting += data
                while (end := command_end(waiting)) is not None:
                    command = bytes(waiting[:end])
                    del waiting[:end]
                    if b"EVALSHA" in command.upper() and b'"status": "ok"' in command:
                        lost.set()
                    redis_out.write(command)
                await redis_out.drain()
        redis_out.close()

    async def replies() -> None:
        with contextlib.suppress(OSError):
            while data := await redis_in.read(65536):
                if lost.is_set():
                    await asyncio.Event().wait()  # held: the reply is lost
                client_out.write(data)
                await client_out.drain()
        client_out.close()

    for pump in (requests(), replies()):
        pumps.add(asyncio.create_task(pump))


@pytest.fixture
async def lossy_link(redis_server: Any) -> AsyncIterator[str]:
    async with redis_through(_proxy, redis_server.port) as url:
        yield url


async def test_an_ok_applied_whose_reply_is_lost_three_times_is_the_sections_one_final(
    lossy_link: str, worker: Any, redis_server: Any, tmp_path: Path, caplog: Any
) -> None:
    state = tmp_path / "node"
    node = await worker(role="both", state_dir=str(state), queue=lossy_link)
    stream = ready_key(node.app[SCHEDULER_KEY].node)
    output = state / "outputs" / "lost" / "section_0.wav"
    sections = [
        {"idx": i, "text": "lost", "output_path": str(output.with_name(f"section_{i}.wav"))} for i in (0, 1)
    ]
    spec = {"id": "lost", "node": "x", "params": {}, "sections": sections, "preview": False}
    async with aioredis.Redis.from_url(redis_server.url) as planter:
        await planter.script_load(scripts.FINAL)  # (else the first EVALSHA's NOSCRIPT is the reply lost)
        await planter.hset(
            job_key("lost"), mapping={**COUNTS, "total": 2, "spec": json.dumps({**spec, "created_at": 0})}
        )
        await planter.set(wav_key("lost", 0), b"RIFF" + bytes(64))
        await planter.xadd(stream, {"job": "lost", "idx": 0, "duration": 1, "elapsed": 1})
        async with asyncio.timeout(seconds(90)):  # the entry is done with: acknowledged (polled)
            while await planter.xlen(stream):  # (acknowledged and deleted once the writer is done with it)
                await asyncio.sleep(0.1)
        events = await logged_events(planter, "lost")
    dropped = [r.getMessage() for r in caplog.records if "dropped entry" in r.getMessage()]
    assert dropped and "in 3 tries, Redis answering" in dropped[0], dropped  # (the case: three replies lost)
    assert dropped[0].endswith("its section had ended already (its final stands)"), (
        dropped
    )  # (not "is failed")
    assert [(e["event"], e.get("idx"), e.get("status")) for e in events] == [("progress", 0, "ok")], events
