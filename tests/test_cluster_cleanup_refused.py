"""A node's clean-ups of a shared job while Redis refuses every write (a real redis-server made a replica of a
master that is not there: READONLY; OOM, WRONGTYPE and NOPERM alike): a slow listener's `SlowConsumer` and
cancel, and a follower's trim and removal of a job's PCM, waited out outages only; a refusal ended the
node's task with a traceback in its log (an ERROR `cluster task … ended` for the slow listener). Now each is
one WARNING line and the task ends cleanly: the job is left to its end, its PCM to retention."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from npu_worker.jobs.cluster import pcm_stream
from npu_worker.jobs.cluster.cancelling import fail_slow_listener
from npu_worker.jobs.cluster.follower import Followers
from npu_worker.jobs.cluster.keys import pcm_key
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.observer import SchedulerObserver
from npu_worker.jobs.stats import Stats
from tests.test_cluster_engine_refused_writes import dead_port
from tests.test_cluster_store import create, make_job


@pytest.fixture
async def replica_jobs(jobs: RedisJobs) -> AsyncIterator[RedisJobs]:
    """`jobs` with a job `slow` under way and a PCM stream of it, then its Redis made a replica."""
    await create(jobs, make_job("slow", 2))
    await jobs.redis.xadd(pcm_key("slow"), pcm_stream.encode(0, "a", 0, None))  # an attempt's end
    master = dead_port()
    await jobs.redis.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
    try:
        yield jobs
    finally:
        await jobs.redis.execute_command("REPLICAOF", "NO", "ONE")
        master.close()


async def test_a_slow_listeners_failure_redis_refuses_is_one_warning(
    replica_jobs: RedisJobs, caplog: Any
) -> None:
    with caplog.at_level(logging.WARNING, logger="npu_worker.jobs.cluster"):
        await fail_slow_listener(replica_jobs, make_job("slow", 2), Stats(), SchedulerObserver())
    [said] = [r for r in caplog.records if r.name.startswith("npu_worker.jobs.cluster")]
    assert (
        said.levelno == logging.WARNING
        and "job slow" in said.getMessage()
        and "read only replica" in said.getMessage()
    )
    assert (await replica_jobs.load("slow")).finished is False  # (left to its end)


@pytest.mark.parametrize("clean_up", ["trim of what its listener read", "removal at the follower's end"])
async def test_a_followers_pcm_clean_up_redis_refuses_is_one_warning(
    replica_jobs: RedisJobs, caplog: Any, clean_up: str
) -> None:
    followers = Followers(replica_jobs, block_ms=100)
    try:
        with caplog.at_level(logging.WARNING, logger="npu_worker.jobs.cluster"):
            if clean_up.startswith("trim"):
                await followers._trim("slow", "0-1")
            else:  # followed with its PCM and no one listening: the follower ends and removes the PCM
                followers.attach(make_job("slow", 2), audio=True)
                await asyncio.gather(*followers._tasks)
    finally:
        await followers.close()
    said = [r for r in caplog.records if r.name.startswith("npu_worker.jobs.cluster")]
    assert {r.levelno for r in said} == {logging.WARNING}, [r.getMessage() for r in said]
    what = "trim" if clean_up.startswith("trim") else "removal"
    assert any(f"job slow: its PCM's {what} left undone" in r.getMessage() for r in said), said
    assert await replica_jobs.redis.exists(pcm_key("slow")) == 1  # (retention removes it with the job)
