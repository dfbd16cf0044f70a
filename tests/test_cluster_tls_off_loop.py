"""A `rediss://` node's TLS set-up (a real TLS redis-server, its CA file in the URL): redis-py made the TLS
context on the event loop at each new connection, the CA file and the system's CA store read and looked at
there (blocking I/O on the loop: caught here by blockbuster, as every test of this suite is). Now the
context is made in a thread, once per connection object; the commands still check the certificate."""

from __future__ import annotations

import asyncio
import ssl
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from npu_worker.jobs.cluster.pools import waiting_client
from tests.test_cluster_redis_pools import tls_redis
from tests.timing import seconds


async def test_a_rediss_node_makes_its_tls_context_off_the_loop(tmp_path: Path) -> None:
    server, certificate = tls_redis(tmp_path)
    server.start()
    try:
        url = f"rediss://localhost:{server.port}/0?ssl_ca_certs={certificate}&ssl_check_hostname=true"
        client = waiting_client(url, connections=2, wait=seconds(10), socket_timeout=seconds(10))
        try:
            assert await client.ping() is True
            async with client.pipeline(transaction=False) as pipe:  # a second connection beside it
                assert await pipe.ping().execute() == [True]
        finally:
            await client.aclose()
        other_ca = tmp_path / "other"
        other_ca.mkdir()
        _, unrelated = tls_redis(other_ca)  # a CA that did not sign the server's certificate
        url = f"rediss://localhost:{server.port}/0?ssl_ca_certs={unrelated}"
        client = waiting_client(url, connections=1, wait=seconds(10), socket_timeout=seconds(10))
        try:
            with pytest.raises(RedisConnectionError) as refused:
                await client.ping()
            assert isinstance(refused.value.__context__, ssl.SSLError) or "CERTIFICATE" in str(refused.value)
        finally:
            await client.aclose()
    finally:
        server.stop()


async def test_a_rediss_connection_asked_for_from_the_default_executor_is_made_whatever_it_holds(
    tmp_path: Path,
) -> None:
    """A wav's pieces are read from the loop's default executor, each thread waiting on the loop for its
    GETRANGE (`RedisJournal.call`, `redis_wav.py`). The TLS context made in that executor (`to_thread`)
    waited behind the very threads waiting for its connection: with every one of them so held, nothing
    moved (the pieces timed out, wavs cut short). One thread here stands for all of them."""
    server, certificate = tls_redis(tmp_path)
    server.start()
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="default")
    loop.set_default_executor(executor)
    try:
        url = f"rediss://localhost:{server.port}/0?ssl_ca_certs={certificate}"
        client = waiting_client(url, connections=1, wait=seconds(10), socket_timeout=seconds(10))

        def from_the_executor() -> object:  # as `RedisJournal.call` waits for a command on the loop
            return asyncio.run_coroutine_threadsafe(client.ping(), loop).result(timeout=seconds(10))

        try:
            assert await loop.run_in_executor(None, from_the_executor) is True
        finally:
            await client.aclose()
    finally:
        server.stop()
        executor.shutdown(wait=False, cancel_futures=True)
