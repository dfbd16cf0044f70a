"""`npu-worker serve --port 0` in a child process, for tests that need the real command line: the port
the system chose is read back from its log, so no other process can take a port picked free before the
worker binds it (the race `worker_process.free_port` leaves), nor answer the test in the worker's place."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from tests.timing import seconds
from tests.worker_process import PORT_CHOSEN


class ServeProcess(subprocess.Popen[str]):
    """The worker's process; a thread reads its stderr as it comes (the log the tests assert), so the
    port line is seen before the process ends and a chatty worker never blocks on a full pipe."""

    def __init__(self, args: Sequence[str], env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", *args]
        super().__init__(command, env=env, stderr=subprocess.PIPE, text=True)
        self._lines: list[str] = []
        self._port: int | None = None
        self._said_port = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.stderr is not None
        for line in self.stderr:
            self._lines.append(line)
            if self._port is None and PORT_CHOSEN in line:
                self._port = int(line.partition(PORT_CHOSEN)[2].split(",")[0])
                self._said_port.set()

    @property
    def port(self) -> int:
        """The port the worker bound, once its log has said it (it binds before its engine loads)."""
        deadline = time.monotonic() + seconds(30)
        while not self._said_port.wait(0.05):
            assert self.poll() is None or self._reader.is_alive(), f"the worker exited: {self.log()}"
            assert time.monotonic() < deadline, f"the worker never said its port: {self.log()}"
        assert self._port is not None
        return self._port

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        """What the worker has logged so far."""
        return "".join(self._lines)

    def terminate_and_log(self, timeout: float) -> str:
        """SIGTERM, then the whole log once the process has ended (its stderr read to the end)."""
        self.send_signal(signal.SIGTERM)
        return self.log_at_exit(timeout)

    def log_at_exit(self, timeout: float) -> str:
        """The whole log once the process has ended on its own (its stderr read to the end)."""
        self.wait(timeout)
        self._reader.join(timeout)
        return self.log()
