"""A Redis node whose engine loop ended on a bug (a real redis-server, a real worker in process): it was
left down until the node was restarted by hand (`/health` 500 `…; restart the node`, which is no exit,
so systemd's `Restart=on-failure` never did it) and the section it held waited for ever. It now starts
again by itself as the node's other loops do: the item it held runs first, the engine is not loaded again."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.engine_node import EngineNode
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


class CountedLoads(ToneEngine):
    """A tone engine that counts its loads (a restarted loop keeps the engine it loaded)."""

    loads = 0

    def load(self) -> None:
        self.loads += 1
        super().load()


async def test_an_engine_loop_that_ended_on_a_bug_starts_again_and_runs_what_it_held(
    worker: Any, redis_server: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    run_item = EngineNode._run_item
    bugs: list[str] = []

    async def a_bug_first(self: EngineNode, item: Any) -> None:
        if not bugs:  # the first item only, claimed and not run: a bug the next start does not meet
            bugs.append(item.job_id)
            raise RuntimeError("a bug in the engine loop")
        await run_item(self, item)

    monkeypatch.setattr(EngineNode, "_run_item", a_bug_first)
    engine = CountedLoads()
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    scheduler.loops.first_pause = 0.2
    seen: list[str | None] = []
    told = scheduler.loops._failed

    def recorded(failure: Any) -> None:
        seen.append(None if failure is None else str(failure))
        told(failure)

    scheduler.loops._failed = recorded
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "held"}]})
    job_id = (await answer.json())["job_id"]
    await until(lambda: None in seen, "the engine loop's start again")  # (streams end while it is down)
    async with asyncio.timeout(seconds(30)):
        events = [json.loads(line) async for line in (await node.get(f"/jobs/{job_id}/events")).content]
    assert bugs == [job_id]
    said = "NodeRestarting: this node's engine loop ended on RuntimeError; it starts again in 0.2 s"
    assert len(seen) == 2 and seen[0] is not None and seen[0].startswith(said) and seen[1] is None, seen
    finals = [e for e in events if e["event"] in ("progress", "error") and e.get("status") in ("ok", "fail")]
    assert [(e["event"], e["status"]) for e in finals] == [("progress", "ok")], events
    assert events[-1]["event"] == "done" and engine.loads == 1
    health = await node.get("/health")
    assert (health.status, (await health.json())["status"]) == (200, "ok")
