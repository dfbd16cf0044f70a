"""Seconds from SIGTERM to exit of an idle `npu-worker serve` (espeak backend), over a few runs.

python benchmarks/shutdown_time.py [runs]
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from common import listening_port


def one_run(state_dir: str) -> float:
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", "--state-dir", state_dir]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    port = listening_port(process)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                if json.loads(response.read())["loaded"]:
                    break
        except OSError:
            time.sleep(0.05)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    return time.monotonic() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=int, nargs="?", default=5, help="worker starts, one SIGTERM each")
    runs = parser.parse_args(argv).runs
    with tempfile.TemporaryDirectory() as state_dir:
        times = [one_run(state_dir) for _ in range(runs)]
    print("SIGTERM → exit (s): " + ", ".join(f"{t:.3f}" for t in times))
    print(f"min {min(times):.3f}  max {max(times):.3f}")


if __name__ == "__main__":
    main()
