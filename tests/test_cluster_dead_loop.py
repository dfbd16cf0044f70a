"""A Redis node whose own loop (heartbeat, engine, writer, retention, cancel listener) ended on an
exception it did not expect (a real redis-server, a real worker in process): it was only logged, so the
node's `/health` said 200, its beat went on naming its engine, and its peers never counted it out; then it
stayed failed until restarted by hand (a 500 is no exit: systemd never restarted it). It now starts again
by itself (`node_loops.py`)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any

import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.keys import CANCEL_CHANNEL, NODES
from npu_worker.jobs.cluster.store import RedisJobs
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def health_until_not_ok(node: Any) -> tuple[int, dict[str, Any]]:
    """`/health` polled (no event says a loop ended to a caller) until it is no longer 200."""
    async with asyncio.timeout(seconds(20)):
        while True:
            answer = await node.get("/health")
            if answer.status != 200:
                return answer.status, await answer.json()
            await asyncio.sleep(0.1)


async def cancel_listener_subscribed(queue: str) -> None:
    """The node's cancel listener is subscribed (polled: no event reaches the test). A cancel published
    before is heard by no one: on a loaded box the listener, started with the node, subscribed after the
    test's section ran and its DELETE published, and the test waited out its deadline for an end."""
    async with aioredis.Redis.from_url(queue) as client, asyncio.timeout(seconds(20)):
        while (await client.pubsub_numsub(CANCEL_CHANNEL))[0][1] < 1:
            await asyncio.sleep(0.02)


async def a_running_section(node: Any, scheduler: Any, queue: str) -> str:
    """A job whose one section runs (held by the engine's gate), its id, once a cancel of it is heard."""
    answer = await node.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "held"}]})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(20)):  # its section runs (no event reaches the test)
        while scheduler.engine_node.running is None:
            await asyncio.sleep(0.02)
    await cancel_listener_subscribed(queue)
    return job_id


class InterruptFails(ToneEngine):
    """An engine whose call in flight cannot be stopped (a sovits upstream gone): `interrupt` raises,
    and the cancel listener that calls it ends."""

    def interrupt(self, _clear: bool) -> None:
        raise RuntimeError("the upstream call cannot be stopped")


async def test_a_node_loop_that_ended_on_a_bug_fails_its_health_and_its_beat(worker, redis_server, tmp_path):
    """The cancel listener ends (its engine's `interrupt` raised): /health 503 `fail`, /ready 503, a
    submission refused in the same words (`NodeRestarting`, with `Retry-After`: they were 500
    `InternalError` while the loop waited to start again), and its beat carries the failure as a failed engine's, without
    a backend, so an api node counts it out (`engines_failed`, `info`); the beat itself goes on."""
    engine = InterruptFails()
    engine.gate = threading.Event()  # the section runs until the test lets it go
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    scheduler.loops.first_pause = pause = seconds(600)  # down for the whole test
    try:
        job_id = await a_running_section(node, scheduler, redis_server.url)
        assert (await node.delete(f"/jobs/{job_id}")).status == 200
        status, said = await health_until_not_ok(node)
        async with aioredis.Redis.from_url(redis_server.url) as client, asyncio.timeout(seconds(20)):
            while True:  # the next beat (one a second)
                beat = json.loads((await client.hget(NODES, scheduler.node)) or b"{}")
                if "load_error" in beat:
                    break
                await asyncio.sleep(0.1)
    finally:
        engine.gate.set()
    wanted = f"NodeRestarting: this node's cancel listener loop ended on RuntimeError; it starts again in {pause:g} s"
    assert (status, said["status"]) == (503, "fail") and said["error"].startswith(wanted), said
    assert "backend" not in beat and beat["load_error"].startswith(wanted), beat
    ready = await node.get("/ready")
    assert ready.status == 503 and (await ready.json())["reason"].startswith("the worker cannot serve: ")
    refused = await node.post("/synth_batch", json={"sections": [{"idx": 0, "text": "after"}]})
    assert refused.status == 503 and (await refused.json())["error"].startswith(wanted)
    # The pause is a refusal's "not now" (it was a 500, as for a failure waiting cannot mend).
    assert [answer.headers.get("Retry-After") for answer in (ready, refused)] == ["1", "1"]
    assert (await node.get("/health")).headers.get("Retry-After") == "1"


async def test_a_node_loop_that_ended_on_a_bug_starts_again_by_itself(worker, redis_server, tmp_path):
    """The cancel listener ends (its engine's `interrupt` raised): the node is down while it is, then
    the loop starts again by itself and the failure is lifted: /health 200 and its beat names its engine
    again. It stayed failed until the node was restarted by hand. The listener that started again hears
    the next cancel (it ends on it again, and its next pause is doubled)."""
    engine = InterruptFails()
    engine.gate = threading.Event()
    node = await worker(engine, role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    scheduler.loops.first_pause = 0.5
    # Every failure the node is told, in order: a poll of `loop_failure` could miss the 0.5 s it is set
    # (a test that resumes later on a loaded machine waited for it for ever).
    seen: list[str | None] = []
    told = scheduler.loops._failed

    def recorded(failure: Any) -> None:
        seen.append(None if failure is None else str(failure))
        told(failure)

    scheduler.loops._failed = recorded
    said = "NodeRestarting: this node's cancel listener loop ended on RuntimeError; it starts again in"
    try:
        job_id = await a_running_section(node, scheduler, redis_server.url)
        assert (await node.delete(f"/jobs/{job_id}")).status == 200
        await until(lambda: None in seen, "the listener's end, then its start again")
        assert seen == [f"{said} 0.5 s (its log has why)", None] and scheduler.loop_failure is None
        health = await node.get("/health")
        assert (health.status, (await health.json())["status"]) == (200, "ok")
        async with aioredis.Redis.from_url(redis_server.url) as client:
            async with asyncio.timeout(seconds(20)):
                while True:  # the next beat names the engine again (one a second)
                    beat = json.loads((await client.hget(NODES, scheduler.node)) or b"{}")
                    if beat.get("backend") and "load_error" not in beat:
                        break
                    await asyncio.sleep(0.1)
            await cancel_listener_subscribed(redis_server.url)  # subscribed again
            await client.publish(CANCEL_CHANNEL, job_id)  # its section still runs: interrupt raises again
        await until(lambda: len(seen) > 2, "the listener's second end")
        assert seen[2] == f"{said} 1 s (its log has why)"
    finally:
        engine.gate.set()


async def test_a_writer_that_started_again_writes_the_sections_it_had_read(
    worker, redis_server, tmp_path, monkeypatch
):
    """An api node's writer ends on a bug once it has read a section another node made (a bug between
    the read and the writes: an entry's own failure fails that entry alone, `test_cluster_writer_poison`):
    started again, it read only new entries, so the ones it had read and not written (that one, and up to
    63 read with it) stayed pending in Redis: /health said 200 again, and their job never ended. It now
    reads its own pending entries first, as at the node's start."""
    ready = RedisJobs.ready
    bugs: list[str] = []

    async def ready_then_a_bug(self: RedisJobs, *args: Any, **kwargs: Any) -> Any:
        rows = await ready(self, *args, **kwargs)
        if rows and not bugs:  # the first entries read only: a bug the next start does not meet
            bugs.append(rows[0][1]["job"])
            raise RuntimeError("a bug in the writer")
        return rows

    monkeypatch.setattr(RedisJobs, "ready", ready_then_a_bug)
    cluster = {"queue": redis_server.url}
    await worker(role="engine", state_dir=str(tmp_path / "engine"), **cluster)
    api = await worker(role="api", state_dir=str(tmp_path / "api"), **cluster)
    api.app[SCHEDULER_KEY].loops.first_pause = 0.1
    async with asyncio.timeout(seconds(20)):  # (the beats: no event reaches the test)
        while (await (await api.get("/health")).json()).get("cluster", {}).get("engines_alive") != 1:
            await asyncio.sleep(0.05)
    answer = await api.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "written"}]})
    job_id = (await answer.json())["job_id"]
    async with asyncio.timeout(seconds(30)):
        events = [json.loads(line) async for line in (await api.get(f"/jobs/{job_id}/events")).content]
    assert bugs == [job_id]
    assert [e["event"] for e in events if e["event"] != "heartbeat"][-2:] == ["progress", "done"], events
    ok = [e for e in events if e["event"] == "progress" and e["status"] == "ok"]
    assert len(ok) == 1 and os.path.getsize(ok[0]["wav_path"]) > 44, events
