"""Redis refusing every write for a while (a real redis-server made a replica of no one: READONLY, as
when a replica is promoted or demoted) under a running node: each of its loops logged an ERROR every
2 s for as long as it lasted, and nothing said when it ended. Now each loop says it once as it starts
(a WARNING), reminds at most every `REFUSAL_REMINDER_SECONDS`, and says once that it ended."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from npu_worker.jobs.cluster import outage
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
