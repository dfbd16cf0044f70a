"""A node started against a Redis that is a replica (a real redis-server made one of a master that is not
there: it refuses every write, READONLY): the start-up probe took the URL as usable, then making the node's
consumer groups raised ReadOnlyError, a traceback out of `serve`'s start. Now `serve` refuses the queue in one
line naming the cause, and a start that meets the refusal anyway (the app built in process, a Redis demoted
after the probe) fails with a clear `QueueUnavailable`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from npu_worker.protocol import QueueUnavailable
from tests.test_cluster_engine_refused_writes import dead_port
from tests.timing import seconds


@pytest.fixture
def replica(redis_server: Any) -> Iterator[str]:
    """`redis_server`'s URL while it is a replica of a port no one listens on (it stays one)."""
    master = dead_port()
    with redis.Redis.from_url(redis_server.url) as admin:
        admin.execute_command("REPLICAOF", "127.0.0.1", str(master.getsockname()[1]))
        try:
            yield redis_server.url
        finally:
            admin.execute_command("REPLICAOF", "NO", "ONE")
            master.close()


def test_serve_against_a_replica_is_one_line_and_exit_1(tmp_path: Path, replica: str) -> None:
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", "--queue", replica]
    command += ["--state-dir", str(tmp_path / "state"), "--backend", "espeak"]
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=seconds(60))
    assert done.returncode == 1, done.stderr[-2000:]
    [line] = done.stderr.splitlines()
    assert line.startswith(f"npu-worker serve: cannot use the queue {replica}: it is a replica"), line


async def test_a_start_that_meets_a_replica_is_a_clear_queue_unavailable(worker: Any, replica: str) -> None:
    with pytest.raises(QueueUnavailable, match="refused this node's consumer groups: .*read only replica"):
        await worker(role="both", queue=replica)
