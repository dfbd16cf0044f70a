"""The node's Redis connections to a name (`pools.LookedUpConnection`, real sockets, a real redis-server):
an IPv6 link-local address kept its zone only as text (`Invalid argument`, or a second lookup in the
loop's default executor), the lookup and each address's connect had the connect timeout each, and a
connection that failed said only the last address's failure."""

from __future__ import annotations

import asyncio
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from npu_worker.jobs.cluster.pools import LOOKUPS, LookedUpConnection, waiting_client
from tests.redis_server import RedisServer, redis_available
from tests.timing import seconds
from tests.worker_process import refusing_port

pytestmark = pytest.mark.allow_blocking  # (the sockets the test fills a backlog with, off the node)


def link_local_address() -> tuple[str, str] | None:
    """An IPv6 link-local address of this machine and its interface (`fe80::…`, `eth0`), if it has one."""
    try:
        rows = Path("/proc/net/if_inet6").read_text().split()
    except OSError:
        return None
    for at in range(0, len(rows) - 5, 6):
        digits, interface = rows[at], rows[at + 5]
        if digits.startswith("fe80") and interface != "lo":
            return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(digits)), interface
    return None


class RecordingExecutor(ThreadPoolExecutor):
    """The loop's default executor, each function it is given kept (a lookup there is the fault)."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.given: list[str] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.given.append(getattr(fn, "__name__", repr(fn)))
        return super().submit(fn, *args, **kwargs)


async def test_a_link_local_address_is_connected_with_its_zone(tmp_path: Path) -> None:
    """`redis://[fe80::…%25eth0]:PORT`: the zone (the scope id `getaddrinfo` answers) was lost on the way
    to the connect, `Error 22 … Invalid argument` (or, where Python keeps it in the text, the address
    was looked up again in the loop's default executor)."""
    found = link_local_address()
    if found is None or not redis_available():
        pytest.skip("no IPv6 link-local address on this machine, or no redis-server")
    address, interface = found
    server = RedisServer(tmp_path, "--bind", f"127.0.0.1 {address}%{interface}")
    server.start()
    executor = RecordingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    try:
        url = f"redis://[{address}%25{interface}]:{server.port}/0"
        client = waiting_client(url, connections=1, wait=seconds(10), socket_timeout=seconds(10))
        try:
            assert await client.ping() is True
        finally:
            await client.aclose()
    finally:
        server.stop()
    assert "getaddrinfo" not in executor.given, executor.given


def answers(*hosts: str) -> Any:
    """A resolver in the node's place that names `hosts` for any name (each as `getaddrinfo` gives it)."""

    def resolve(_name: str, port: int, **kind: Any) -> list[Any]:
        return [row for host in hosts for row in socket.getaddrinfo(host, port, **kind)]

    return resolve


async def test_a_connection_that_fails_says_each_address_failure(monkeypatch: Any) -> None:
    """A name of two addresses, both refused: the error said the last one's only."""
    monkeypatch.setattr(LOOKUPS, "resolve", answers("127.0.0.1", "127.0.0.2"))
    # held bound, never listening: a port picked free and closed could be another test's redis-server by then
    with refusing_port() as port:
        connection = LookedUpConnection(host="redis.test", port=port, retry=Retry(NoBackoff(), 0))
        with pytest.raises(RedisConnectionError) as failed:
            await connection.connect()
    said = str(failed.value)
    assert f"127.0.0.1:{port}: " in said and f"127.0.0.2:{port}: " in said, said


async def test_the_connect_timeout_bounds_the_lookup_and_every_address_together(monkeypatch: Any) -> None:
    """A slow lookup, then two addresses that never answer (a listener whose backlog is full drops the
    SYN): the first had the 2 s in full after the lookup had its own, so it took at least the lookup's
    time and a timeout (3.8 s); now the whole is one timeout (2 s), whatever the machine's load."""
    lookup_s, timeout_s = 1.8, 2.0
    resolve = answers("127.0.0.1", "127.0.0.1")

    def slow_resolve(name: str, port: int, **kind: Any) -> list[Any]:
        time.sleep(lookup_s)  # (on the lookup threads: a slow resolver)
        return resolve(name, port, **kind)

    monkeypatch.setattr(LOOKUPS, "resolve", slow_resolve)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        filling = [socket.socket() for _ in range(3)]
        for sock in filling:
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))  # the backlog fills; later connects hang unanswered
        connection = LookedUpConnection(
            host="silent.test", port=port, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
        )
        started = time.monotonic()
        try:
            with pytest.raises((RedisConnectionError, RedisTimeoutError)) as failed:
                await connection.connect()
        finally:
            for sock in filling:
                sock.close()
        took = time.monotonic() - started
    assert took < lookup_s + timeout_s, (took, str(failed.value))


async def test_a_silent_first_address_leaves_time_for_the_next(monkeypatch: Any, tmp_path: Path) -> None:
    """A name whose first address never answers (a dead host of a round robin, a firewall that drops),
    its second a running Redis: the first took the whole connect timeout, the second was never tried,
    and every connection failed (`Timeout connecting to server`); each address had the timeout in full
    before. Now each has its share of what is left (the last all of it). The node's own settings: a 2 s
    connect timeout, two retries."""
    if not redis_available():
        pytest.skip("no redis-server")
    server = RedisServer(tmp_path)
    server.start()
    try:
        with socket.socket() as listener:
            listener.bind(("127.0.0.2", server.port))  # (the silent one: a full backlog drops the SYN)
            listener.listen(0)
            filling = [socket.socket() for _ in range(3)]
            for sock in filling:
                sock.setblocking(False)
                sock.connect_ex(("127.0.0.2", server.port))
            monkeypatch.setattr(LOOKUPS, "resolve", answers("127.0.0.2", "127.0.0.1"))
            url = f"redis://redis.test:{server.port}/0"
            client = waiting_client(url, connections=1, wait=seconds(20), socket_timeout=seconds(20))
            try:
                assert await client.ping() is True
            finally:
                await client.aclose()
                for sock in filling:
                    sock.close()
    finally:
        server.stop()
