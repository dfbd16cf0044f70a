"""A preview whose caller was told its stream was lost while Redis refused every write (a real redis-server
made a replica of a master that is not there: READONLY; past `WRITES_REFUSED_LIMIT`, 2 s here): its cancel
could not be logged then, was dropped with a WARNING, and once Redis took writes again the preview ran on to
its end for nobody. Now the cancel waits while Redis refuses writes and is logged once it takes them: the
preview ends `cancelled`, its section stopped (the engine node hears the cancel)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.jobs.cluster import heartbeat
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.protocol import Done
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def _ended(jobs: RedisJobs, job_id: str) -> Done | None:
    job = await jobs.load(job_id)
    done = [entry.event for entry in job.log if isinstance(entry.event, Done)] if job is not None else []
    return done[0] if done else None


def _cancel_tried(caplog: Any, job_id: str) -> bool:
    """The node has met the refusal with the preview's cancel (it says so, naming the job)."""
    return any(f"job {job_id}: its cancel" in record.getMessage() for record in caplog.records)


async def test_a_preview_lost_while_redis_refused_writes_is_cancelled_once_it_takes_them(
    redis_server: Any, worker: Any, tmp_path: Any, monkeypatch: Any, caplog: Any
) -> None:
    monkeypatch.setattr(heartbeat, "WRITES_REFUSED_LIMIT", 2.0)  # (60 s in production)
    engine = ToneEngine()
    engine.gate = threading.Event()  # the section runs until the test lets it end
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    master = dead_port()
    jobs = RedisJobs(redis_server.url)
    ended: Done | None = None
    try:
        async with aioredis.Redis.from_url(redis_server.url) as admin:
            try:
                synth = asyncio.ensure_future(
                    node.post(
                        "/synth", json={"text": "held for nobody", "output_path": str(tmp_path / "s.wav")}
                    )
                )
                await until(lambda: engine.calls or synth.done(), "the section to start")
                assert not synth.done(), await (await synth).text()
                [key] = [key async for key in admin.scan_iter("npu:job:*")]
                job_id = key.decode().removeprefix("npu:job:")
                await admin.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
                async with asyncio.timeout(seconds(30)):
                    answer = await synth  # its stream ended: the caller was told, and went
                    assert answer.status == 503, await answer.text()
                await until(lambda: _cancel_tried(caplog, job_id), "the node to try the preview's cancel")
            finally:
                await admin.execute_command("REPLICAOF", "NO", "ONE")
                master.close()
            try:  # the section still held: only the cancel can end the preview now
                async with asyncio.timeout(seconds(15)):
                    while (ended := await _ended(jobs, job_id)) is None:
                        await asyncio.sleep(0.05)
            except TimeoutError:
                pass
    finally:
        engine.gate.set()
        await jobs.close()
    assert ended is not None, "the preview no one heard was never cancelled: it runs on for nobody"
    assert ended.cancelled and ended.ok_count == 0, ended
