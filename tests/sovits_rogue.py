"""A misbehaving sovits_worker on a real socket: each connection gets what `script` sends after the
request was read (GET /health answers ok unless `on_health`) (a trickle, silence, a redirect, an endless body, broken HTTP), so tests can drive the
proxy engine through what a real upstream should never do."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable

Script = Callable[[socket.socket, "RogueUpstream"], None]
HEALTHY = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{"status": "ok"}'


class RogueUpstream:
    def __init__(self, script: Script, on_health: bool = False) -> None:
        self.script = script
        self.on_health = on_health  # else GET /health answers ok (the engine loads) and /synth misbehaves
        self.connections = 0
        self.asked = 0  # requests the script answered
        self.bodies: list[bytes] = []  # their bodies, in order
        self.hung_up = threading.Event()  # a client closed a connection the script held open
        self.stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> RogueUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._listener.close()
        self._thread.join(2)

    def _accept(self) -> None:
        self._listener.settimeout(0.02)  # a closed listener does not wake accept(): poll
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            head, _, body = head.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length and (data := conn.recv(65536)):
                body += data
            try:
                if head.startswith(b"GET /health ") and not self.on_health:
                    conn.sendall(HEALTHY)
                    return
                self.bodies.append(body)
                self.asked += 1
                self.script(conn, self)
            except OSError:
                self.hung_up.set()

    def wait_hang_up(self, conn: socket.socket) -> None:
        """Hold the connection open, answering nothing, until the client closes it."""
        conn.settimeout(0.05)
        while not self.stopping.is_set():
            try:
                if not conn.recv(65536):
                    self.hung_up.set()
                    return
            except TimeoutError:
                continue


def trickle_headers(conn: socket.socket, rogue: RogueUpstream) -> None:
    """A status line, then a header one byte every 0.1 s, for ever."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    while not rogue.stopping.is_set():
        conn.sendall(b"a")
        time.sleep(0.1)


def trickle_body(conn: socket.socket, rogue: RogueUpstream) -> None:
    """Headers promising 100 000 bytes, then one byte every 0.1 s."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
    while not rogue.stopping.is_set():
        conn.sendall(b" ")
        time.sleep(0.1)


def silent(conn: socket.socket, rogue: RogueUpstream) -> None:
    """Works on the request for ever (a long synthesis)."""
    rogue.wait_hang_up(conn)


def redirect(conn: socket.socket, rogue: RogueUpstream) -> None:
    conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: ftp://127.0.0.1:1/x\r\nContent-Length: 0\r\n\r\n")


def endless(status: int) -> Script:
    """A reply with `status` whose body never ends (no length, close-delimited)."""

    def script(conn: socket.socket, rogue: RogueUpstream) -> None:
        conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n\r\n".encode())
        block = b"0" * 65536
        while not rogue.stopping.is_set():
            conn.sendall(block)

    return script


def raw(reply: bytes) -> Script:
    """Send `reply` as it is, then close."""

    def script(conn: socket.socket, rogue: RogueUpstream) -> None:
        conn.sendall(reply)

    return script


def writes_after_hang_up(go: threading.Event) -> Script:
    """The first request: works until the client hangs up, then, once `go` is set (the section has
    ended), writes its wav all the same, as a real server that does not notice; any later one: a 500."""

    def script(conn: socket.socket, rogue: RogueUpstream) -> None:
        if rogue.asked > 1:
            conn.sendall(b"HTTP/1.1 500 X\r\nContent-Length: 0\r\n\r\n")
            return
        with contextlib.suppress(OSError):  # a reset, as often as a close
            rogue.wait_hang_up(conn)
        go.wait(10)
        output = json.loads(rogue.bodies[0])["output_path"]
        with open(output, "wb") as wav:
            wav.write(b"RIFF" + b"\0" * 40)

    return script
