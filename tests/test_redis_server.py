"""The tests' own redis-server (`tests/redis_server.py`) starts even where its port was taken between
the pick and redis-server's bind, and a restart stays on its port (its clients reconnect there)."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.redis_server import RedisServer, redis_available

pytestmark = pytest.mark.skipif(not redis_available(), reason="redis-server is not installed")


def test_a_port_taken_before_redis_binds_it_is_left_for_another(tmp_path):
    """Before: the start waited 10 s for a PONG from whatever held the port, and failed the test."""
    server = RedisServer(tmp_path)
    with socket.socket() as taker:  # another process's listener, one that never answers
        taker.bind(("127.0.0.1", server.port))
        taker.listen()
        server.start()
        try:
            assert server.port != taker.getsockname()[1]
            assert server.command("PING").startswith(b"+PONG")
        finally:
            server.stop()


def test_a_restart_keeps_its_port_and_its_data(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    port = server.port
    try:
        assert server.command("SET", "kept", "1").startswith(b"+OK")
        server.stop(save=True)
        server.start()
        assert server.port == port and server.command("GET", "kept") == b"$1\r\n1\r\n"
    finally:
        server.stop()


def test_a_restart_waits_for_its_port_while_another_process_holds_it(tmp_path):
    """Its clients reconnect to the same port: taken meanwhile, it is tried again until let go."""
    server = RedisServer(tmp_path)
    server.start()
    port = server.port
    server.stop()
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the stopped server's TIME_WAITs
    holder.bind(("127.0.0.1", port))
    holder.listen()
    threading.Timer(0.5, holder.close).start()
    server.start()
    try:
        assert server.port == port and server.command("PING").startswith(b"+PONG")
    finally:
        server.stop()
