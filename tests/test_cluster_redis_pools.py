"""The node's connections to Redis under many callers at once (a real redis-server, a real worker
process): redis-py's pool refused a command at once when its cap was reached, and that refusal read as
`Redis is unreachable`."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.cluster.keys import NODES
from npu_worker.jobs.cluster.outage import redis_unreachable
from npu_worker.jobs.cluster.pools import (
    COMMAND_CONNECTIONS,
    FOLLOW_CONNECTIONS,
    ConnectionsBusy,
    waiting_client,
)
from npu_worker.jobs.cluster.store import RedisJobs
from tests.cluster_support import node_starter
from tests.redis_server import RedisServer
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking

CALLS = 400


@pytest.fixture
def start_node(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    yield from node_starter(tmp_path, redis_server)


async def finished_job(session: aiohttp.ClientSession, base: str) -> str:
    """A one-section job, its `done` read: its section's wav is in Redis."""
    body = {"sections": [{"idx": 0, "text": "many callers"}]}
    async with session.post(f"{base}/synth_batch?async=1", json=body) as response:
        assert response.status == 200, await response.text()
        job_id = str((await response.json())["job_id"])
    async with session.get(f"{base}/jobs/{job_id}/events") as response:
        lines = [json.loads(raw) for raw in (await response.read()).splitlines()]
    assert lines[-1]["event"] == "done" and lines[-2].get("status") == "ok", lines[-3:]
    return job_id


async def test_many_audio_reads_at_once_wait_for_a_connection_instead_of_a_503(start_node: Any) -> None:
    """800 `GET .../sections/0/audio` at once on one node answered 597 with 503 `Redis is unreachable
    (MaxConnectionsError)`, Redis up, and cut others' wavs short after their headers: redis-py's pool
    refused each command past its 100 connections."""
    node = start_node("both-1")
    timeout = aiohttp.ClientTimeout(total=seconds(120))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as session:
        job_id = await finished_job(session, node.base)
        url = f"{node.base}/jobs/{job_id}/sections/0/audio"

        async def one() -> tuple[int, bytes]:
            async with session.get(url) as response:
                try:
                    return response.status, await response.read()
                except aiohttp.ClientPayloadError as exc:  # its wav cut short: a piece's read refused
                    return 0, f"cut: {exc}".encode()

        answers = await asyncio.gather(*(one() for _ in range(CALLS)))
    refused = [body[:300] for status, body in answers if status != 200]
    assert not refused, f"{len(refused)} of {CALLS} refused, as {refused[:2]}"
    assert len({body for _, body in answers}) == 1 and answers[0][1][:4] == b"RIFF"


def clients_blocked(redis_server: RedisServer) -> int:
    stats = redis_server.command("INFO", "clients").decode()
    return int(stats.split("blocked_clients:")[1].split()[0])


async def test_the_nodes_own_blocking_reads_are_not_left_waiting_behind_its_callers_streams(
    jobs: RedisJobs, redis_server: RedisServer
) -> None:
    """Callers' followed jobs and the node's engine and writer loops took their blocking reads from one
    pool: with as many jobs followed as it held, the writer's read (and the engine's claim, the cancel
    channel) was refused `MaxConnectionsError` for as long as they were, retried as an outage."""
    follows = [
        asyncio.ensure_future(jobs.read_log(f"followed-{n}", 0, 30_000)) for n in range(FOLLOW_CONNECTIONS)
    ]
    try:
        async with asyncio.timeout(seconds(30)):  # every one waits in Redis (no event says so: polled)
            while clients_blocked(redis_server) < FOLLOW_CONNECTIONS:
                await asyncio.sleep(0.05)
        async with asyncio.timeout(seconds(10)):
            assert await jobs.ready("n1", own=False, block_ms=100) == []
    finally:
        for follow in follows:
            follow.cancel()
        await asyncio.gather(*follows, return_exceptions=True)


async def test_a_pool_whose_connections_stay_in_use_says_so_and_a_refused_connect_is_still_an_outage(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Past its wait, a command is refused as this node's business, not as `Redis is unreachable`."""
    client = waiting_client(redis_server.url, connections=2, wait=0.2, socket_timeout=seconds(30))
    held = [asyncio.ensure_future(client.blpop(["held"], timeout=seconds(20))) for _ in range(2)]
    async with asyncio.timeout(seconds(20)):  # both wait in Redis (no event says so: polled)
        while clients_blocked(redis_server) < 2:
            await asyncio.sleep(0.02)
    with pytest.raises(ConnectionsBusy) as busy:
        await client.ping()
    said = str(redis_unreachable(busy.value))
    assert said == "QueueUnavailable: this node's connections to Redis are all in use; retry shortly"
    redis_server.command("RPUSH", "held", "a", "b")  # both answered: their connections come back
    assert sorted(reply for _, reply in await asyncio.gather(*held)) == [b"a", b"b"]
    assert await client.ping() is True
    await client.aclose()
    stopped = RedisServer(tmp_path / "gone")  # a port no Redis listens on: an outage, told as one
    closed = waiting_client(stopped.url, connections=2, wait=0.2, socket_timeout=5.0)
    with pytest.raises(RedisConnectionError) as down:
        await closed.ping()
    assert not isinstance(down.value, ConnectionsBusy) and "unreachable" in str(redis_unreachable(down.value))
    await closed.aclose()


def test_connections_to_a_named_redis_are_made_while_every_default_executor_thread_waits_for_one(
    redis_server: RedisServer,
) -> None:
    """50 downloads of one wav at once from a `redis://localhost` node: 45-48 of them answered 503
    `Redis is unreachable (Timeout connecting to server)` or were cut after their headers, at load 8-15.
    Each piece of a wav is read from a thread of the loop's default executor, which waits for its
    GETRANGE on the loop (`RedisJournal.call`); a GETRANGE needing a new connection had its host's name
    looked up in that same executor (asyncio's `getaddrinfo`), queued behind the threads waiting for
    it, until the 2 s connect timeout. Here every thread of a small default executor waits that way."""
    threads = 4

    async def every_thread_waiting() -> list[Any]:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(threads))  # (this loop's own: asyncio.run's)
        url = redis_server.url.replace("127.0.0.1", "localhost")  # a name: each connection looks it up
        client = waiting_client(url, connections=threads, wait=seconds(30), socket_timeout=seconds(30))

        def piece() -> Any:  # as `RedisWav.readinto` does: the command on the loop, the thread waiting
            return asyncio.run_coroutine_threadsafe(client.ping(), loop).result(timeout=seconds(60))

        try:
            waiting = [loop.run_in_executor(None, piece) for _ in range(threads)]
            return await asyncio.gather(*waiting, return_exceptions=True)
        finally:
            await client.aclose()

    answers = asyncio.run(every_thread_waiting())
    assert answers == [True] * threads, answers


def test_connections_opened_at_once_share_a_slow_lookup_of_the_name_instead_of_queueing_past_the_timeout(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A burst of new connections to a `redis://NAME` node (a burst of downloads, a Redis restart) made a
    lookup each, queued on the node's 4 lookup threads: with a resolver taking 0.5 s an answer (a far
    or loaded DNS server), 40 at once needed 5 s, and those past the 2 s connect timeout failed `Timeout
    connecting to server` (a caller's 503), Redis up. The resolver here is the real one, made slow."""
    connections, real_lookup = 40, socket.getaddrinfo

    def slow_lookup(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.5)  # the resolver's latency, not a wait for an event
        return real_lookup(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)

    async def at_once() -> list[Any]:
        url = redis_server.url.replace("127.0.0.1", "localhost")  # a name: each connection looks it up
        client = waiting_client(url, connections=connections, wait=seconds(30), socket_timeout=seconds(30))
        try:
            return await asyncio.gather(*(client.ping() for _ in range(connections)), return_exceptions=True)
        finally:
            await client.aclose()

    answers = asyncio.run(at_once())
    failed = [f"{type(answer).__name__}: {answer}" for answer in answers if answer is not True]
    assert not failed, f"{len(failed)} of {connections} failed, as {failed[:2]}"


def tls_redis(directory: Path) -> tuple[RedisServer, Path]:
    """A redis-server that speaks TLS only, its certificate (self-signed) for the name `localhost`."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (it makes the test's certificate)")
    certificate, key = directory / "redis.crt", directory / "redis.key"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
    subprocess.run([*command, "-keyout", str(key), "-out", str(certificate)], check=True, capture_output=True)
    server = RedisServer(directory)
    server.options = ("--port", "0", "--tls-port", str(server.port), "--tls-auth-clients", "no")
    server.options += ("--tls-cert-file", str(certificate), "--tls-key-file", str(key))
    return server, certificate


async def test_a_rediss_connection_looked_up_by_the_node_checks_the_certificate_against_the_name(
    tmp_path: Path,
) -> None:
    """The node connects to the address it looked up (`LookedUpConnection`), and still asks TLS for the
    certificate of the name in the URL: checked against the address, it would not match."""
    server, certificate = tls_redis(tmp_path)
    server.start()
    try:
        url = f"rediss://localhost:{server.port}/0?ssl_ca_certs={certificate}&ssl_check_hostname=true"
        client = waiting_client(url, connections=1, wait=seconds(10), socket_timeout=seconds(10))
        try:
            assert await client.ping() is True
        finally:
            await client.aclose()
    finally:
        server.stop()


async def test_the_nodes_beat_and_health_go_on_while_callers_hold_every_command_connection(
    worker: Any, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A flood of callers' commands holding every connection of the command pool: /health's read of the
    cluster view waited for one past its 1 s and said 503 `Redis is unreachable (TimeoutError)`, Redis up;
    the node's beat waited behind them too (peers count a node whose beat is 5 s old out), and was
    refused `ConnectionsBusy` past 5 s. Its beat and its view have connections of their own now."""
    node = await worker(role="both", state_dir=str(tmp_path / "node"), queue=redis_server.url)
    scheduler = node.app[SCHEDULER_KEY]
    held = [scheduler.jobs.redis.pipeline() for _ in range(COMMAND_CONNECTIONS)]
    async with aioredis.Redis.from_url(redis_server.url) as reader:
        try:
            for pipe in held:  # each holds its connection until reset, with no timeout running meanwhile
                await pipe.watch("held")
            beat = json.loads(await reader.hget(NODES, scheduler.node))["seen"]
            async with asyncio.timeout(seconds(20)):  # a beat sent since (one a second; polled)
                while json.loads(await reader.hget(NODES, scheduler.node))["seen"] == beat:
                    health = await node.get("/health")
                    assert health.status == 200, await health.text()
                    await asyncio.sleep(0.1)
            health = await node.get("/health")  # (a view read since the beat's: not the one cached)
            assert health.status == 200, await health.text()
        finally:
            for pipe in held:
                await pipe.reset()
