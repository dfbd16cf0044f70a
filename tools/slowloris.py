"""Slowloris against a real `npu-worker serve`: N sockets trickle header bytes while /health is timed.

Starts the worker under a lowered open-files limit (as `ulimit -n` would), opens the sockets, keeps
each sending a byte every second, and prints /health latencies and how many sockets the server closed.
With `--body` each socket sends whole headers of a `POST /synth` at once and trickles its body instead.

    python tools/slowloris.py --sockets 1100 --nofile 1024
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_process import ServeProcess  # noqa: E402


def health_ms(port: int, timeout: float) -> float | None:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout) as response:
            json.loads(response.read())
    except OSError:
        return None
    return (time.monotonic() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=1100)
    parser.add_argument("--nofile", type=int, default=1024, help="the worker's open-files limit")
    parser.add_argument("--seconds", type=float, default=15.0, help="how long to trickle")
    parser.add_argument("--body", action="store_true", help="whole headers at once, then trickle a body")
    parser.add_argument("serve_args", nargs="*", help="extra `npu-worker serve` flags (after --)")
    args = parser.parse_args()
    own = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(own[1], args.sockets + 256), own[1]))
    with tempfile.TemporaryDirectory() as state:

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.nofile, own[1]))

        # --port 0, the port read back from its log: a port picked free first may be taken meanwhile
        command = ["--state-dir", state, *args.serve_args]
        process = ServeProcess(command, echo_from="ERROR", cwd=ROOT, preexec_fn=limit)
        try:
            port = process.port
            while health_ms(port, 2.0) is None:
                time.sleep(0.2)
            socks = []
            for _ in range(args.sockets):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                sock.setblocking(False)
                if args.body:
                    sock.send(b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n")
                else:
                    sock.send(b"GET / HTTP/1.1\r\n")
                socks.append(sock)
            closed: set[int] = set()
            latencies: list[float | None] = []
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline:
                for number, sock in enumerate(socks):
                    if number in closed:
                        continue
                    try:
                        sock.send(b"X")
                    except OSError:
                        closed.add(number)
                latencies.append(health_ms(port, 5.0))
                time.sleep(1.0)
            answered = [ms for ms in latencies if ms is not None]
            what = "body" if args.body else "header"
            print(
                f"{args.sockets} {what}-trickling sockets, worker ulimit -n {args.nofile}, {args.seconds:.0f} s"
            )
            print(f"/health: {len(answered)}/{len(latencies)} answered within 5 s", end="")
            if answered:
                print(f", max {max(answered):.0f} ms, median {sorted(answered)[len(answered) // 2]:.0f} ms")
            else:
                print()
            print(f"sockets closed by the server: {len(closed)}")
            for sock in socks:
                sock.close()
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
