"""A real redis-server for the cluster tests: a free loopback port, no persistence, stopped after.

`stop(save=True)` then `start()` models an operator restarting Redis: `SHUTDOWN SAVE` writes a snapshot
into the test's own directory (the fixture configures none), and the new process on the same port loads
it back. redis-server's own log is `redis-PORT.log` in that directory.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.timing import seconds


def redis_available() -> bool:
    return shutil.which("redis-server") is not None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    def __init__(self, directory: Path, *options: str) -> None:
        self.directory = directory
        self.options = options  # more of redis-server's options, e.g. `--rename-command INFO ""`
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.started = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """redis-server on `self.port`, once it said it accepts connections. The port was free when
        picked, not held: where another process took it meanwhile (redis-server says so and exits), the
        first start picks another; a restart keeps its port (its clients reconnect there) and tries again."""
        deadline = time.monotonic() + seconds(10)
        while time.monotonic() < deadline:
            if self._started_on_port(deadline):
                self.started = True
                return
            if not self.started:
                self.port = _free_port()
            time.sleep(0.05)
        raise AssertionError(f"redis-server did not start on port {self.port}")

    def _started_on_port(self, deadline: float) -> bool:
        """Whether redis-server bound `self.port` and is ready (False: that port was in use)."""
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.directory), "--protected-mode", "no"]
        log_path = self.directory / f"redis-{self.port}.log"
        with log_path.open("wb") as log:
            self.process = subprocess.Popen([*command, *self.options], stdout=log, stderr=subprocess.STDOUT)
        while time.monotonic() < deadline:
            log_text = log_path.read_text(errors="replace")
            if "Ready to accept connections" in log_text:
                return True  # this process's own log: the port answering is this server, no other
            if self.process.poll() is not None:
                assert "Address already in use" in log_text, f"redis-server failed: {log_text}"
                self.process = None
                return False
            time.sleep(0.02)
        self.process.kill()
        raise AssertionError(f"redis-server did not start: {log_path.read_text(errors='replace')}")

    def command(self, *words: str, timeout: float = 5) -> bytes:
        """One inline command over a plain socket (the test's view, independent of the worker's client)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall((" ".join(words) + "\r\n").encode())
            return sock.recv(65536)

    def stop(self, save: bool = False) -> None:
        if self.process is None:
            return
        if save:
            try:
                self.command("SHUTDOWN", "SAVE")
            except OSError:
                pass
        else:
            self._shutdown_nosave()
        self.process.wait(timeout=seconds(10))
        self.process = None

    def _shutdown_nosave(self) -> None:
        """`SHUTDOWN NOSAVE` ends redis-server at once; SIGTERM waits for its next timer tick (≈ 0.1 s a
        stop, once per cluster test). SIGTERM still where the command is not answered (a stopped Redis)."""
        assert self.process is not None
        try:
            self.command("SHUTDOWN", "NOSAVE", timeout=1)
            self.process.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            self.process.terminate()
