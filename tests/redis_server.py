"""A real redis-server for the cluster tests: a free loopback port, no persistence, stopped after.

`restart()` models an operator restarting Redis: `SHUTDOWN SAVE` writes a snapshot into the test's
own directory (the fixture configures none), and the new process on the same port loads it back.
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
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        command += [
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
            "--protected-mode",
            "no",
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + seconds(10)
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        raise AssertionError("redis-server did not start")

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
