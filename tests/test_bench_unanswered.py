"""How long `npu-worker bench` waits on what does not answer. A port that accepts and says nothing (a
wedged worker, a stopped one, another service) held it 5 minutes at `/health`, aiohttp's default, then
`cannot reach URL: ` with no reason; and that default cut every measured request at 5 minutes whatever
`--timeout` said, each recorded as `timeout after 600 s`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp

from npu_worker.bench.load import ASK_SECONDS, LoadConfig, run_load
from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]


def test_a_port_that_accepts_and_says_nothing_is_refused_within_the_ask_bound(tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []  # accepted, read from never, answered never

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:  # the listener closed: the test is over
                return

    threading.Thread(target=accept, daemon=True).start()
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    argv = [sys.executable, "-m", "npu_worker.bench.cli", "bench", "--base", base, "--rps", "1"]
    argv += ["--duration", "5", "--out", str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    try:  # it took 300 s: past this bound the test fails
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=ASK_SECONDS + seconds(60)
        )
    finally:
        listener.close()
        for connection in held:
            connection.close()
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr
        == f"npu-worker bench: {base}/health: no answer within 10 s: is a worker listening there?\n"
    )
    assert time.monotonic() - started >= ASK_SECONDS  # (it waited for the answer that long, no less)
    assert not list(tmp_path.iterdir())  # no report of a run that never began


async def test_measured_requests_are_bounded_by_timeout_alone_not_by_aiohttps_default(tmp_path, monkeypatch):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    worker = ServeProcess(["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0"], env)
    try:
        base = worker.wait_ready()
        # aiohttp's default (5 minutes) made shorter than any request: the run must not be cut by it
        monkeypatch.setattr(aiohttp.client, "DEFAULT_TIMEOUT", aiohttp.ClientTimeout(total=0.001))
        config = LoadConfig(base, (4.0,), ("안녕하세요. 반갑습니다.",), duration=2, max_requests=4)
        result = await run_load(config)
    finally:
        worker.kill()
        worker.wait(seconds(30))
    records = result["records"]
    assert len(records) == 8 and [r["error"] for r in records] == [None] * 8, records
    assert all(r["ttfa_ms"] is not None for r in records), records
