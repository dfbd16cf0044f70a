"""The tests' own servers restarted on a port they must keep (a client follows them there): the worker
process and the sovits stand-in start once another process has let that port go, not only if nobody
held it (redis-server's: `test_redis_server.py`)."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.sovits_standin import SovitsStandIn
from tests.timing import seconds
from tests.worker_process import start_worker_process

pytestmark = pytest.mark.allow_blocking


def test_a_worker_given_a_port_held_a_while_by_another_process_binds_it_once_let_go(tmp_path):
    """Before: the worker, refused the port, exited, and the start waited for a /health that nothing
    would answer any more, failing the test after its timeout."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    threading.Timer(1.0, holder.close).start()  # let go once the worker has been refused it
    process = start_worker_process(tmp_path / "state", port, delay=0.0, timeout=seconds(30))
    try:
        assert process.port == port and process.poll() is None
    finally:
        process.kill()
        process.wait()


def test_a_sovits_stand_in_given_a_port_held_a_while_binds_it_once_let_go():
    """The upstream back on its old port after a blip (`test_sovits_engine`): it raised EADDRINUSE."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    threading.Timer(0.5, holder.close).start()
    with SovitsStandIn(port=port) as upstream:
        assert upstream.base == f"http://127.0.0.1:{port}"
