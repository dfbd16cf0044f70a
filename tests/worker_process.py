"""A worker in its own process (tone engine, optionally slow), so tests can really `kill -9` it."""

from __future__ import annotations

import argparse
import json
import logging
import resource
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npu_worker.app import build_app  # noqa: E402
from npu_worker.cli import SHUTDOWN_TIMEOUT  # noqa: E402
from npu_worker.config import Settings  # noqa: E402
from npu_worker.server import run  # noqa: E402
from tests.tone_engine import ToneEngine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-per-chunk", type=float, default=0.0)
    parser.add_argument("--output-root", default=None)
    parser.add_argument("--queue", default="local")
    parser.add_argument("--role", default="both")
    parser.add_argument("--claim-timeout", type=float, default=30.0)
    parser.add_argument("--nofile", type=int, default=0, help="lower the open-files limit (ulimit -n)")
    parser.add_argument("--max-connections", type=int, default=512)
    parser.add_argument("--header-timeout", type=float, default=10.0)
    parser.add_argument("--shutdown-grace", type=float, default=30.0)
    args = parser.parse_args()
    if args.nofile:
        # the hard limit too: `serve` raises the soft one to what --max-connections needs where it can
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, args.nofile))
    roots = (args.output_root,) if args.output_root else ()
    settings = Settings(
        port=args.port,
        state_dir=args.state_dir,
        output_roots=roots,
        cache_max_bytes=0,
        max_connections=args.max_connections,
        queue=args.queue,
        role=args.role,
        claim_timeout=args.claim_timeout,
        header_timeout=args.header_timeout,
        shutdown_grace=args.shutdown_grace,
    )
    engine = ToneEngine(chunk_seconds=0.05, delay_per_chunk=args.delay_per_chunk)
    logging.basicConfig(level="INFO", format="%(levelname)s %(name)s: %(message)s")
    run(build_app(settings, engine=engine), settings, shutdown_timeout=SHUTDOWN_TIMEOUT)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_worker_process(
    state_dir: Path,
    port: int,
    delay: float,
    timeout: float = 30.0,
    grace: float = 30.0,
    output_root: Path | None = None,
    extra: Sequence[str] = (),
    **popen: Any,
) -> subprocess.Popen:
    """This script in a child process on `port`, returned once /health says loaded."""
    command = [sys.executable, __file__, "--state-dir", str(state_dir), "--port", str(port), *extra]
    command += ["--delay-per-chunk", str(delay), "--shutdown-grace", str(grace)]
    if output_root is not None:
        command += ["--output-root", str(output_root)]
    process = subprocess.Popen(command, **popen)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                if json.loads(response.read())["loaded"]:
                    return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("worker process did not start")


if __name__ == "__main__":
    main()
