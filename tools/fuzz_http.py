"""Long fuzz run of the HTTP API against a real `npu-worker serve` (default espeak engine) it starts.

Prints requests sent, 5xx, hangs, wrong shapes, the status mix, and the worker's RSS before and after
(so growth per request shows). Needs the test extras (hypothesis).

    python tools/fuzz_http.py --examples 10000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz_support import fuzz  # noqa: E402
from tests.serve_process import ServeProcess  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_worker(state: Path, root: Path, backend: str) -> ServeProcess:
    """`serve --port 0` (the port read back from its log: one picked free first may be taken meanwhile),
    once loaded; its log is read and kept, not shown."""
    command = ["--backend", backend, "--state-dir", str(state), "--output-roots", str(root)]
    process = ServeProcess(command, cwd=ROOT)
    port = process.port
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                if json.loads(response.read())["loaded"]:
                    return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the worker did not start")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=2000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=1, help="rounds (RSS is printed after each)")
    parser.add_argument("--backend", default="espeak")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds before a request counts as a hang"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        state, root = Path(scratch) / "state", Path(scratch) / "root"
        root.mkdir()
        process = start_worker(state, root, args.backend)
        port = process.port
        try:
            print(f"worker pid {process.pid}, RSS at start {rss_mib(process.pid):.1f} MiB")
            for round_no in range(1, args.rounds + 1):
                started = time.monotonic()
                tally = fuzz(
                    f"http://127.0.0.1:{port}", str(root), args.examples, args.timeout, seed=round_no
                )
                print(
                    f"round {round_no}: sent {tally.sent}, 5xx {tally.server_errors}, hangs {tally.hangs}, "
                    f"wrong shapes {tally.wrong_shapes}, {time.monotonic() - started:.0f} s, "
                    f"RSS {rss_mib(process.pid):.1f} MiB"
                )
                print("  statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.statuses.items())))
                for example in tally.examples:
                    print("  " + example)
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
