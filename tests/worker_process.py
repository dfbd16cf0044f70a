"""A worker in its own process (tone engine, optionally slow), so tests can really `kill -9` it."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npu_worker.app import build_app  # noqa: E402
from npu_worker.cli import SHUTDOWN_TIMEOUT  # noqa: E402
from npu_worker.config import Settings  # noqa: E402
from npu_worker.server import run  # noqa: E402
from tests.log_drain import LoggedProcess  # noqa: E402
from tests.tone_engine import ToneEngine  # noqa: E402


def main() -> None:
    # A worker as a terminal starts it, also when the suite runs under nohup (SIGHUP ignored is inherited,
    # and `serve` keeps an ignored SIGHUP ignored: test_shutdown's SIGHUP drain would wait for ever).
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
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
    parser.add_argument("--port-file", default=None, help="with --port 0: where to write the port chosen")
    parser.add_argument("--file-size-limit", type=int, default=0, help="a full disk: writes past it fail")
    args = parser.parse_args()
    if args.file_size_limit:  # EFBIG past the limit, as ENOSPC would be (tests/disk_full.py)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (args.file_size_limit, resource.RLIM_INFINITY))
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
    if args.port_file:
        logging.getLogger("npu_worker.server").addHandler(PortFile(args.port_file))
    run(build_app(settings, engine=engine), settings, shutdown_timeout=SHUTDOWN_TIMEOUT)


# What `serve` logs for `--port 0` (server.listen): the port the system chose is said nowhere else.
PORT_CHOSEN = "--port 0: listening on port "


class PortFile(logging.Handler):
    """Writes the port `serve` chose for `--port 0`, read from its log line, to a file the parent reads
    (atomically: the file is empty until the port is whole in it)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith(PORT_CHOSEN):
            Path(self.path + ".part").write_text(message.removeprefix(PORT_CHOSEN).split(",")[0])
            os.replace(self.path + ".part", self.path)


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A loopback port every connect to is refused while the block runs: bound, never listening, so no
    other process can take it (a port picked free and closed may be another test's Redis by then)."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


class WorkerProcess(subprocess.Popen):
    """A worker process and the port it listens on (`port`)."""

    port: int


class LoggedWorkerProcess(LoggedProcess):
    """A worker process whose log a thread reads as it comes (`start_worker_process(..., logged=True)`):
    `log()`, `log_until(text, timeout)`, `log_at_exit(timeout)`."""

    port: int


def start_worker_process(
    state_dir: Path,
    port: int,
    delay: float,
    timeout: float = 30.0,
    grace: float = 30.0,
    output_root: Path | None = None,
    extra: Sequence[str] = (),
    logged: bool = False,
    **popen: Any,
) -> WorkerProcess | LoggedWorkerProcess:
    """This script in a child process on `port`, returned once /health says loaded. Port 0: the one the
    system chose as the worker bound it (`process.port`), so no other process can take it between a
    port picked free and closed and the worker's bind, nor answer this /health in its place. A port
    given (a restart where a client must find the worker again) may be held by another process a while:
    the worker, refused it, exits, and is started again until it binds it or `timeout` runs out.
    `logged`: its stderr read on a thread as it comes (a `LoggedWorkerProcess`), never left to fill a pipe."""
    command = [sys.executable, __file__, "--state-dir", str(state_dir), "--port", str(port), *extra]
    command += ["--delay-per-chunk", str(delay), "--shutdown-grace", str(grace)]
    if output_root is not None:
        command += ["--output-root", str(output_root)]
    deadline = time.monotonic() + timeout
    if port == 0:
        handle, port_file = tempfile.mkstemp(prefix="npu-worker-port-")
        os.close(handle)
        command += ["--port-file", port_file]
    given = port != 0
    kind = LoggedWorkerProcess if logged else WorkerProcess
    process = kind(command, **popen)
    if not given:
        try:
            port = chosen_port(process, Path(port_file), deadline)
        finally:
            for leftover in (port_file, port_file + ".part"):
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
    process.port = port
    while time.monotonic() < deadline:
        if given and process.poll() is not None:  # the port was in use: try again
            time.sleep(0.1)
            process = kind(command, **popen)
            process.port = port
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                if json.loads(response.read())["loaded"] and process.poll() is None:
                    return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError("worker process did not start")


def chosen_port(process: subprocess.Popen, port_file: Path, deadline: float) -> int:
    """The port a worker started with `--port 0 --port-file` chose, once it has bound it."""
    while time.monotonic() < deadline and process.poll() is None:
        written = port_file.read_text()
        if written:
            return int(written)
        time.sleep(0.05)
    process.kill()
    raise AssertionError("worker process did not say its port")


if __name__ == "__main__":
    main()
