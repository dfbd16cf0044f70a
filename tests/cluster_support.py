"""Worker processes on a shared real redis-server for the cluster tests (no tests here)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from npu_worker.jobs.cluster.journal import RedisJournal
from npu_worker.jobs.cluster.redis_wav import open_redis_wav
from npu_worker.jobs.cluster.store import RedisJobs
from npu_worker.jobs.loop_handoff import LoopHandoff
from npu_worker.jobs.store import JobStore
from tests.redis_server import RedisServer
from tests.timing import seconds
from tests.worker_process import start_worker_process


async def stored_wav(jobs: RedisJobs, job_id: str, idx: int) -> bytes | None:
    """A section's wav in Redis as `GET .../audio` reads it (`redis_wav.open_redis_wav`: its length on
    the loop, then a piece at a time from a thread), or None when Redis holds none."""
    journal = RedisJournal(jobs, JobStore(Path("unused")), LoopHandoff(asyncio.get_running_loop()), "n1")
    wav = await open_redis_wav(journal, jobs, job_id, idx)
    if wav is None:
        return None
    with wav:
        return await asyncio.to_thread(wav.read)


class Node:
    def __init__(self, name: str, port: int, process: subprocess.Popen[bytes], state: Path) -> None:
        self.name, self.port, self.process, self.state = name, port, process, state

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()


def node_starter(tmp_path: Path, redis_server: RedisServer) -> Iterator[Any]:
    """The body of each cluster test module's `start_node` fixture: `start(name, role, ...)`."""
    nodes: list[Node] = []

    def start(
        name: str, role: str = "both", delay: float = 0.01, claim_timeout: float = 1.0, grace: float = 30.0
    ) -> Node:
        """A worker process; a name used before restarts that node (same state dir, same node id)."""
        state = tmp_path / name
        extra = ("--queue", redis_server.url, "--role", role, "--claim-timeout", str(claim_timeout))
        extra += ("--output-root", str(tmp_path))
        process = start_worker_process(state, 0, delay, seconds(30), grace=grace, extra=extra)
        node = Node(name, process.port, process, state)
        nodes.append(node)
        return node

    yield start
    for node in nodes:
        node.kill()


def call(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=seconds(20)) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw[:1] in (b"{", b"[") else raw
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
