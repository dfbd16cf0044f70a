"""A node that stops while Redis refuses every write (a real redis-server made a replica of a master that is
not there: READONLY): no beat is written, nor its `stopped` mark, so its peers counted it alive until Redis
took writes again (`alive_within` grew with the refusals), /health listed it and an api node sent work its way.
Now each node holds a subscription on a channel of its own while its process lives (`presence.py`), and
while writes are refused a peer counts a node heard before only while `PUBSUB NUMSUB` (a read) says it holds
it: the stopped node leaves the view, the live one stays in it. A node whose refusals began after its peers'
(its own clock of them started late) counts those still there too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import redis.asyncio as aioredis

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.heartbeat import ALIVE_WITHIN, Heartbeat
from npu_worker.jobs.cluster.keys import NODES
from npu_worker.jobs.cluster.presence import hold_presence, present
from npu_worker.jobs.cluster.store import RedisJobs
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds


async def _beat_age(admin: aioredis.Redis, node: str) -> float:
    """How old the node's beat in Redis is, by Redis's clock (the one beats are stamped with)."""
    seconds_now, micros = await admin.time()
    return seconds_now + micros / 1e6 - json.loads(await admin.hget(NODES, node))["seen"]


async def _listed(node: Any) -> list[str]:
    health = await (await node.get("/health")).json()
    return [n["node"] for n in health["cluster"]["nodes"]]


async def test_a_node_stopped_while_redis_refuses_writes_leaves_its_peers_view(
    worker: Any, redis_server: Any, tmp_path: Any
) -> None:
    staying = await worker(role="both", state_dir=str(tmp_path / "staying"), queue=redis_server.url)
    going = await worker(role="engine", state_dir=str(tmp_path / "going"), queue=redis_server.url)
    names = sorted(node.app[SCHEDULER_KEY].node for node in (staying, going))
    stays = staying.app[SCHEDULER_KEY].node
    master = dead_port()
    async with aioredis.Redis.from_url(redis_server.url) as admin:
        async with asyncio.timeout(seconds(10)):
            while await _listed(staying) != names:
                await asyncio.sleep(0.05)
        await admin.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
        try:
            async with asyncio.timeout(seconds(30)):  # both beats age past what a live one may (polled)
                while min([await _beat_age(admin, name) for name in names]) <= ALIVE_WITHIN + 1.0:
                    await asyncio.sleep(0.1)
            before = await _listed(staying)
            await going.close()  # its process's connections end; its `stopped` mark is refused
            after: list[str] = []
            try:
                async with asyncio.timeout(seconds(15)):
                    while (after := await _listed(staying)) != [stays]:
                        await asyncio.sleep(0.1)
            except TimeoutError:
                pass
        finally:
            await admin.execute_command("REPLICAOF", "NO", "ONE")
            master.close()
    assert before == names, "a live node dropped out of the view while Redis refused writes"
    assert after == [stays], f"a node stopped while Redis refused writes was still counted alive: {after}"


async def _plant_beat(jobs: RedisJobs, node: str, age: float) -> None:
    """`node`'s last beat, `age` s old by Redis's clock (written before the refusals began), saying it held
    its presence then."""
    seconds_now, micros = await jobs.redis.time()
    beat = {
        "role": "engine",
        "claim_timeout": 30.0,
        "presence": True,
        "seen": seconds_now + micros / 1e6 - age,
    }
    await jobs.redis.hset(NODES, node, json.dumps(beat))


async def test_a_node_whose_refusals_began_after_its_peers_still_counts_those_there(
    jobs: RedisJobs, settings: Any
) -> None:
    """A node that meets the refusals only now (started, or its beat loop started again, while they lasted)
    counted its peers from its own first refusal: every beat older than 5 s by then was out, a live peer's
    too. Now a peer whose process holds its presence counts, and one whose process is gone does not."""
    await _plant_beat(jobs, "there", 30.0)
    await _plant_beat(jobs, "gone", 30.0)
    holding = asyncio.ensure_future(hold_presence(jobs.own_reads, "there"))  # its process, alive
    try:
        async with asyncio.timeout(seconds(10)):
            while await present(jobs.redis, ["there"]) != {"there"}:
                await asyncio.sleep(0.05)
        beat = Heartbeat(jobs, settings)
        await beat._view_while_writes_refused()  # its first refusal: what its loop does as it meets one
    finally:
        holding.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await holding
    assert [node["node"] for node in beat.view["nodes"]] == ["there"], beat.view


async def test_a_presence_an_acl_refuses_is_said_and_never_the_nodes_failure(
    redis_server: Any, caplog: Any
) -> None:
    """A user whose ACL refuses SUBSCRIBE (a real redis-server's ACL: NOPERM): the presence loop ended on the
    error, a loop failure that made the node a 503 `NodeRestarting` to every request. Now it says so once and
    tries again later, running on."""
    async with aioredis.Redis.from_url(redis_server.url) as admin:
        await admin.execute_command("ACL", "SETUSER", "nosub", "on", ">pw", "~*", "&*", "+@all", "-subscribe")
    limited = RedisJobs(redis_server.url.replace("redis://", "redis://nosub:pw@"))
    holding = asyncio.ensure_future(hold_presence(limited.own_reads, "limited"))
    try:
        async with asyncio.timeout(seconds(10)):
            while (
                not any("refused its presence" in r.getMessage() for r in caplog.records)
                and not holding.done()
            ):
                await asyncio.sleep(0.05)
        assert not holding.done(), holding.exception()
    finally:
        holding.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await holding
        await limited.close()


async def test_a_node_whose_presence_its_acl_refuses_is_counted_by_the_old_bound(
    jobs: RedisJobs, redis_server: Any, settings: Any, caplog: Any
) -> None:
    """A node whose Redis user may use only the cancel channel (an ACL written for the worker before
    presence, `&npu:cancel`: SUBSCRIBE to its own channel is NOPERM, PUBSUB NUMSUB is allowed) holds no
    presence, as does a node of an older release in a rolling upgrade: while writes were refused its peers
    read NUMSUB 0 for it and counted it out 5 s in, as every node was before presence. Now a node counts by
    its presence only where its last beat said it held one; else within 5 s of when the refusals began."""
    async with aioredis.Redis.from_url(redis_server.url) as admin:
        acl = ["on", ">pw", "~*", "resetchannels", "&npu:cancel", "+@all"]
        await admin.execute_command("ACL", "SETUSER", "cancelonly", *acl)
    limited = RedisJobs(redis_server.url.replace("redis://", "redis://cancelonly:pw@"))
    its_beat = Heartbeat(limited, settings)
    holding = asyncio.ensure_future(hold_presence(limited.own_reads, "limited", its_beat.presence_refused))
    try:
        async with asyncio.timeout(seconds(10)):
            while not any("refused its presence" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.05)
        body = its_beat._beat_body(None, lambda: None, lambda: None, lambda: None, lambda: None)
        seconds_now, micros = await jobs.redis.time()  # its last beat, 10 s old: 2 s before the refusals
        await jobs.redis.hset(NODES, "limited", json.dumps({**body, "seen": seconds_now + micros / 1e6 - 10}))
        peer = Heartbeat(jobs, settings)
        peer.writes_refused_since = time.monotonic() - 8.0  # the peer has met refusals for 8 s
        await peer._view_while_writes_refused()
    finally:
        holding.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await holding
        await limited.close()
    assert [node["node"] for node in peer.view["nodes"]] == ["limited"], peer.view


async def test_a_presence_lost_for_a_moment_is_no_node_gone(jobs: RedisJobs, settings: Any) -> None:
    """A subscription made again (Redis restarted while it refused writes, a network blip: the node
    subscribes again within a second) read as NUMSUB 0 in between: every node counted out for that beat
    (/health listed none, an api node had no engine). Now a node is counted within `alive_within` s (5 s)
    of when it was last seen present, as within 5 s of its last beat; one gone for good goes once they have
    passed. (60 s here for the first part: a loaded machine may take seconds between two reads.)"""
    await _plant_beat(jobs, "there", 120.0)
    holding = asyncio.ensure_future(hold_presence(jobs.own_reads, "there"))
    try:
        async with asyncio.timeout(seconds(10)):
            while await present(jobs.redis, ["there"]) != {"there"}:
                await asyncio.sleep(0.05)
        seen = [node["node"] for node in (await jobs.cluster_view(60.0, 5.0))["nodes"]]
    finally:
        holding.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await holding
    async with asyncio.timeout(seconds(10)):  # its subscription gone, as while it is made again
        while await present(jobs.redis, ["there"]) != set():
            await asyncio.sleep(0.05)
    moment = [node["node"] for node in (await jobs.cluster_view(60.0, 5.0))["nodes"]]
    assert seen == ["there"] == moment, f"a presence lost for a moment counted its node out: {moment}"
    beat = Heartbeat(jobs, settings)
    async with asyncio.timeout(seconds(30)):  # gone for good: out once 5 s have passed (polled)
        await beat._view_while_writes_refused()
        while beat.view["nodes"]:
            await asyncio.sleep(0.2)
            await beat._view_while_writes_refused()
