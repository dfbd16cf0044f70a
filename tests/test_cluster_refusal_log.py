"""Redis refusing every write for a while (a real redis-server made a replica of no one: READONLY, as
when a replica is promoted or demoted) under a running node: each of its loops logged an ERROR every
2 s for as long as it lasted, and nothing said when it ended. Now each loop says it once as it starts
(a WARNING), reminds at most every `REFUSAL_REMINDER_SECONDS`, and says once that it ended."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster import outage
from npu_worker.jobs.cluster.store import RedisJobs
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds

STARTED, REMINDED, ENDED = "refuses every write for now", "still refuses every write", "takes writes again"


def said(caplog: Any, words: str, who: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if words in r.getMessage() and r.getMessage().startswith(who)]


async def until_said(caplog: Any, words: str, who: str) -> None:
    async with asyncio.timeout(seconds(20)):  # (a log line is the only sign: polled)
        while not said(caplog, words, who):
            await asyncio.sleep(0.05)


async def test_a_redis_refusing_writes_is_said_once_as_it_starts_reminded_and_said_as_it_ends(
    worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(outage, "REFUSAL_REMINDER_SECONDS", 1.0)  # (a minute in production)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    caplog.set_level(logging.INFO, logger="npu_worker.jobs.cluster")
    master = dead_port()  # held: no other test's server can take the port and be copied
    redis_server.command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
    try:
        for who in ("engine node", "writer of node"):  # each loop's own reading is refused
            await until_said(caplog, REMINDED, who)
        refusing = list(caplog.records)
    finally:
        redis_server.command("REPLICAOF", "NO", "ONE")
    for who in ("engine node", "writer of node"):
        await until_said(caplog, ENDED, who)
        assert len(said(caplog, STARTED, who)) == 1, caplog.text
        assert len(said(caplog, ENDED, who)) == 1, caplog.text
        assert all(r.levelno == logging.WARNING for r in said(caplog, "", who)), caplog.text
    errors = [r for r in refusing if r.levelno >= logging.ERROR]
    assert errors == [], caplog.text
    assert (await node.get("/health")).status == 200
    master.close()


async def test_a_section_handed_over_while_redis_refuses_writes_says_so_once_as_it_starts_and_ends(
    worker: Any, redis_server: Any, tmp_path: Any, caplog: Any, monkeypatch: Any
) -> None:
    """The engine thread's hand-over waits (the journal's retry): it was a WARNING a retry, every second
    for as long as the refusal lasted."""
    monkeypatch.setattr(outage, "REFUSAL_REMINDER_SECONDS", 1.0)  # (a minute in production)
    made_ok = RedisJobs.made_ok_ending
    master = dead_port()  # held: no other test's server can take the port and be copied
    turned: list[bool] = []

    async def refused_from_the_first(self: RedisJobs, *args: Any, **kwargs: Any) -> Any:
        if not turned:  # the section is made: now Redis refuses its hand-over, until the test lifts it
            turned.append(True)
            await self.redis.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
        return await made_ok(self, *args, **kwargs)

    monkeypatch.setattr(RedisJobs, "made_ok_ending", refused_from_the_first)
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    caplog.set_level(logging.INFO, logger="npu_worker.jobs.cluster")
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "refused"}]})
    job_id = (await answer.json())["job_id"]
    who = f"node {node.app[SCHEDULER_KEY].node}, npu-worker-engine"  # (the engine thread's journal)
    try:
        await until_said(caplog, REMINDED, who)
    finally:
        redis_server.command("REPLICAOF", "NO", "ONE")
    async with asyncio.timeout(seconds(30)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    assert events[-1]["event"] == "done" and events[-1]["fail_count"] == 0, events
    # The engine thread says the end once its hand-over is taken, which the reader may see first (a CI
    # run asserted before the line was written).
    await until_said(caplog, ENDED, who)
    assert len(said(caplog, STARTED, who)) == 1 and len(said(caplog, ENDED, who)) == 1, caplog.text
    master.close()
