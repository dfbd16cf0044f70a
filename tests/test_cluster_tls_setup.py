"""A `rediss://` connection whose TLS set-up fails before the handshake (a real TLS redis-server; the
URL's `ssl_ca_certs` names no file): the socket the node had connected to the looked-up address was
never handed to a transport, and was left to the garbage collector (`ResourceWarning: unclosed
<socket.socket …>`, a file descriptor held until then, one a try). Now it is closed as the try fails."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from npu_worker.jobs.cluster.pools import waiting_client
from tests.test_cluster_redis_pools import tls_redis
from tests.timing import seconds


async def test_a_rediss_connection_whose_tls_set_up_fails_closes_its_socket(tmp_path: Path) -> None:
    server, _certificate = tls_redis(tmp_path)
    server.start()
    url = f"rediss://localhost:{server.port}/0?ssl_ca_certs={tmp_path / 'no-such-ca.pem'}"
    gc.collect()  # (sockets an earlier test in this process left to the collector: not this test's)
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", ResourceWarning)
            client = waiting_client(url, connections=1, wait=seconds(10), socket_timeout=seconds(10))
            try:
                with pytest.raises(RedisConnectionError) as failed:
                    await client.ping()
                assert "No such file" in str(failed.value), failed.value
                del failed  # (its frames would keep a socket alive past the collection below)
            finally:
                await client.aclose()
            gc.collect()
    finally:
        server.stop()
    unclosed = [str(w.message) for w in said if issubclass(w.category, ResourceWarning)]
    ours = f", {server.port})"  # (the socket's raddr: one to this test's server, not another test's)
    assert not [text for text in unclosed if "socket" in text and ours in text], unclosed
