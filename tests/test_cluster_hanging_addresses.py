"""A Redis name whose every address hangs (real sockets: listeners whose full backlog drops the SYN):
the connect timeout cut the last address's try short and the error named none of them, `Timeout
connecting to server` for a name of one address, `…; out of time after 2 s` without the last one for
more. Now each address is named with what happened to it, the last one too."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from npu_worker.jobs.cluster.pools import LOOKUPS, LookedUpConnection
from tests.test_cluster_redis_lookups import answers

pytestmark = pytest.mark.allow_blocking  # (the sockets the test fills a backlog with, off the node)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 and 127.0.0.2 where connects hang unanswered (each backlog full)."""
    listeners, filling = [], []
    port = 0
    try:
        for host in ("127.0.0.1", "127.0.0.2"):
            listener = socket.socket()
            listeners.append(listener)
            listener.bind((host, port))
            listener.listen(0)
            port = listener.getsockname()[1]
            for _ in range(3):
                sock = socket.socket()
                filling.append(sock)
                sock.setblocking(False)
                sock.connect_ex((host, port))  # the backlog fills; later connects hang unanswered
        yield port
    finally:
        for sock in filling + listeners:
            sock.close()


@pytest.mark.parametrize("hosts", [("127.0.0.1",), ("127.0.0.1", "127.0.0.2")])
async def test_a_connection_to_a_name_whose_every_address_hangs_names_each(
    silent_port: int, monkeypatch: Any, hosts: tuple[str, ...]
) -> None:
    monkeypatch.setattr(LOOKUPS, "resolve", answers(*hosts))
    connection = LookedUpConnection(
        host="silent.test", port=silent_port, socket_connect_timeout=1.0, retry=Retry(NoBackoff(), 0)
    )
    with pytest.raises(RedisConnectionError) as failed:
        await connection.connect()
    said = str(failed.value)
    for host in hosts:
        assert f"{host}:{silent_port}: no answer" in said, said
    assert "out of time after 1 s" in said, said
