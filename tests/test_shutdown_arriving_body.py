"""A request whose headers were in but whose body was still arriving when the SIGTERM came: answered
429 `QueueFull` with `Retry-After: 5` (docs/protocol.md's row), not a connection cut after the drain
(aiohttp's close at shutdown dropped every byte that came after it; `shutdown_bodies`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
import urllib.request
from contextlib import ExitStack

import pytest

from npu_worker.http_compat.request_body import PIECE_OVERHEAD
from tests.test_shutdown import serve, wait_loaded
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking

REQUESTS = {
    "/v1/audio/speech": {"input": "hello", "response_format": "wav"},
    "/synth_batch": {"sections": [{"text": "hello"}], "lang": "en", "stream": False},
}


def headers_and_first_byte(port: int, path: str, body: bytes) -> socket.socket:
    """A connection whose request's headers are sent whole and of its body only the first byte."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=seconds(20))
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body[:1])
    return sock


def wait_bodies_held(base: str, count: int) -> None:
    """The worker's handlers are reading `count` bodies (their first bytes held in the body budget):
    the event a fixed 0.5 s sleep stood for, which a loaded box could outlast (the SIGTERM then came
    before the headers were read)."""
    wanted = count * (1 + PIECE_OVERHEAD)
    deadline = time.monotonic() + seconds(20)
    while (held := body_bytes_held(base)) < wanted:
        assert time.monotonic() < deadline, f"the worker held {held} body bytes, not {wanted}"
        time.sleep(0.02)


def body_bytes_held(base: str) -> float:
    with urllib.request.urlopen(base + "/metrics", timeout=seconds(10)) as response:
        metrics = response.read().decode()
    return float(
        next(line for line in metrics.splitlines() if line.startswith("npu_worker_body_bytes_held ")).split()[
            1
        ]
    )


def wait_listener_closed(port: int) -> None:
    """The shutdown began: the worker's listening socket is closed."""
    deadline = time.monotonic() + seconds(20)
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            return
        time.sleep(0.02)
    raise AssertionError("the worker kept listening after its SIGTERM")


def answer(sock: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        piece = sock.recv(65536)
        if not piece:
            break
        received += piece
    return received


def test_a_body_arriving_at_the_sigterm_is_read_and_answered_queue_full(tmp_path):
    process = serve("--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0")
    sockets = ExitStack()  # each test socket closed, whatever happens (one left open was a ResourceWarning)
    try:
        wait_loaded(process.base, process)
        bodies = {path: json.dumps(body).encode() for path, body in REQUESTS.items()}
        socks = {
            path: sockets.enter_context(headers_and_first_byte(process.port, path, body))
            for path, body in bodies.items()
        }
        wait_bodies_held(process.base, len(socks))  # each request being served, its body arriving
        os.kill(process.pid, signal.SIGTERM)
        wait_listener_closed(process.port)
        for path, sock in socks.items():
            sock.sendall(bodies[path][1:])
        answers = {path: answer(sock).decode(errors="replace") for path, sock in socks.items()}
    finally:
        sockets.close()
        process.kill()
    for path, received in answers.items():
        status = received.split("\r\n", 1)[0]
        assert status == "HTTP/1.1 429 Too Many Requests", (path, received)
        assert "\r\nRetry-After: 5\r\n" in received, (path, received)
