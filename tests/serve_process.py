"""`npu-worker serve --port 0` in a child process, for tests that need the real command line: the port
the system chose is read back from its log, so no other process can take a port picked free before the
worker binds it (the race a port picked free and closed leaves), nor answer the test in the worker's place.
Work is sent once `wait_ready` says `/ready` is 200: before, it is answered `Loading`."""

from __future__ import annotations

import contextlib
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tests.log_drain import LoggedProcess
from tests.signal_scripts import tokenless_env
from tests.timing import seconds
from tests.worker_process import PORT_CHOSEN


class ServeProcess(LoggedProcess):
    """The worker's process; its log (stderr) is read as it comes, so the port line is seen before the
    process ends and a chatty worker never blocks on a full pipe."""

    def __init__(self, args: Sequence[str], env: dict[str, str] | None = None, **popen: Any) -> None:
        """`popen`: LoggedProcess's `echo_from`, Popen's own (`cwd`, `preexec_fn`, ...). The log must
        be at INFO (the default) for the port line: `echo_from` keeps a tool's output as quiet."""
        command = [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", *args]
        self._port: int | None = None
        super().__init__(command, env=env, **popen)

    @property
    def port(self) -> int:
        """The port the worker bound, once its log has said it (it binds before its engine loads)."""
        if self._port is None:
            line = self.log_until(PORT_CHOSEN, seconds(30)).splitlines()[-1]
            self._port = int(line.partition(PORT_CHOSEN)[2].split(",")[0])
        return self._port

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float | None = None) -> str:
        """The base URL once `/ready` is 200: the engine loaded AND the kept jobs read (default 60 scaled
        seconds). No log line says both: "jobs kept" came 5 ms before "engine ready" on an empty state
        dir, and a synth sent after either line alone may be answered `Loading` (CI, 2026-12-07: 9 ms
        early, and the test waited 120 s for a `done` that never comes). Polled: no event says it."""
        deadline = time.monotonic() + (seconds(60) if timeout is None else timeout)
        said = "no answer yet"
        while True:
            assert self.poll() is None, f"the worker exited while starting: {self.log()}"
            try:
                with urllib.request.urlopen(f"{self.base}/ready", timeout=seconds(10)):
                    return self.base  # 200: a request now is served
            except urllib.error.HTTPError as refused:  # 503 while it loads: its reason
                said = f"{refused.code} {json.loads(refused.read()).get('reason')}"
                # no Retry-After: waiting does not help (a failed load), so no wait for the deadline
                assert refused.headers.get("Retry-After"), f"the worker cannot serve ({said}): {self.log()}"
            except OSError as error:
                said = repr(error)
            assert time.monotonic() < deadline, f"the worker is not ready ({said}): {self.log()}"
            time.sleep(0.05)


@contextlib.contextmanager
def tokenless_worker(state: Path) -> Iterator[str]:
    """A real `serve --port 0` with `state` as its state dir and no token; its base URL, once ready (a
    client command sent before would be answered `Loading`, its signal then landing in its retry wait)."""
    worker = ServeProcess(["--state-dir", str(state)], tokenless_env())
    try:
        yield worker.wait_ready()
    finally:
        worker.terminate_and_log(seconds(30))
