"""Bodies held open against a real `npu-worker serve`: the worker's RSS while they are held, and
whether a lecture batch sent meanwhile goes through.

Starts the worker (espeak engine; extra `serve` flags after `--`), opens N connections that each send
all but the last byte of a `--size` body to /synth_batch and hold it, prints the worker's RSS once
they are all sent, then sends the 39-slide lecture (each slide's text repeated to near 1 900
characters: about 320 KiB of JSON) with `?async=1` and prints its answer's status and how many of the
held connections the worker answered (closed) meanwhile.

With `--websocket`, each connection opens `/ws` instead and sends the first fragment (`--size` bytes)
of a text message that never ends.

    python tools/held_bodies.py --sockets 100
    python tools/held_bodies.py --sockets 100 -- --body-budget-bytes 67108864
    python tools/held_bodies.py --sockets 100 --websocket
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_process import ServeProcess  # noqa: E402
from tools.cut_bodies import ready, rss_mib  # noqa: E402

LECTURE = ROOT / "npu_worker" / "bench" / "lecture_ko_39.json"


def lecture_batch() -> bytes:
    lecture = json.loads(LECTURE.read_text(encoding="utf-8"))
    for section in lecture["sections"]:
        text = section["text"]
        section["text"] = (text + " ") * (1900 // (len(text) + 1))
    return json.dumps(lecture).encode()


def hold_bodies(port: int, sockets: int, size: int) -> list[socket.socket]:
    head = (
        f"POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    held = []
    for _ in range(sockets):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        try:
            sock.sendall(head.encode() + b" " * (size - 1))
        except OSError:  # refused and closed while it sent
            pass
        held.append(sock)
    return held


def hold_messages(port: int, sockets: int, size: int) -> list[socket.socket]:
    """Open `/ws` on each and send a first fragment of `size` bytes (masked with a zero key: the
    payload as is) of a message that never ends."""
    handshake = (
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    frame = struct.pack("!BBQ", 0x01, 0x80 | 127, size) + b"\0\0\0\0"  # text, not final, masked
    held = []
    for _ in range(sockets):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(handshake)
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(4096)
        try:
            sock.sendall(frame + b" " * size)
        except OSError:  # dropped while it sent
            pass
        held.append(sock)
    return held


def answered(sock: socket.socket) -> bool:
    """The worker has answered (or closed) this held connection."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) is not None
    except BlockingIOError:
        return False
    except OSError:
        return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sockets", type=int, default=100)
    parser.add_argument(
        "--size", type=int, default=8 * 1024 * 1024, help="declared body bytes (≤ --max-body-bytes)"
    )
    parser.add_argument("--websocket", action="store_true", help="hold unfinished /ws messages instead")
    parser.add_argument("serve_args", nargs="*", help="more `serve` flags (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        # --port 0, the port read back from its log: a port picked free first may be taken meanwhile
        process = ServeProcess(["--state-dir", state, *args.serve_args], echo_from="ERROR", cwd=ROOT)
        held: list[socket.socket] = []
        try:
            port = process.port
            while not ready(port):
                time.sleep(0.2)
            time.sleep(1)
            print(f"worker pid {process.pid}, RSS at start {rss_mib(process.pid)} MiB")
            hold = hold_messages if args.websocket else hold_bodies
            held = hold(port, args.sockets, args.size)
            time.sleep(2)
            what = "WebSocket messages" if args.websocket else "bodies"
            print(f"{args.sockets} {what} of {args.size} bytes held open: RSS {rss_mib(process.pid)} MiB")
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            batch = lecture_batch()
            connection.request("POST", "/synth_batch?async=1", batch, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            print(f"lecture batch ({len(batch)} bytes): {answer.status} {answer.read()[:80]!r}")
            time.sleep(0.5)
            print(
                f"held connections answered by the worker: {sum(answered(sock) for sock in held)} of "
                f"{len(held)}; RSS {rss_mib(process.pid)} MiB"
            )
        finally:
            for sock in held:
                sock.close()
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
