"""Bodies cut short against a real `npu-worker serve`: the worker's RSS after each round.

Starts the worker (espeak engine), then, round after round, opens N connections that each send all but
the last byte of a `--size` body to /synth, holds them a moment and hangs up; prints the RSS of the
worker once each round's requests have ended.

    python tools/cut_bodies.py --sockets 40 --rounds 4
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_process import ServeProcess  # noqa: E402


def rss_mib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))


def ready(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def round_of_cuts(port: int, sockets: int, size: int) -> None:
    head = f"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
    held = []
    for _ in range(sockets):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(head.encode() + b" " * (size - 1))
        held.append(sock)
    time.sleep(2)
    for sock in held:
        sock.close()
    time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument(
        "--size", type=int, default=8 * 1024 * 1024, help="declared body bytes (≤ --max-body-bytes)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        # --port 0, the port read back from its log: a port picked free first may be taken meanwhile
        process = ServeProcess(["--state-dir", state], echo_from="ERROR", cwd=ROOT)
        try:
            port = process.port
            while not ready(port):
                time.sleep(0.2)
            time.sleep(1)
            print(f"worker pid {process.pid}, RSS at start {rss_mib(process.pid)} MiB")
            for number in range(1, args.rounds + 1):
                round_of_cuts(port, args.sockets, args.size)
                print(f"round {number}: {args.sockets} bodies cut short, RSS {rss_mib(process.pid)} MiB")
        finally:
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
