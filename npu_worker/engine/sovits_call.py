"""One HTTP call to the sovits_worker upstream, bounded and endable from another thread.

The upstream is trusted to make audio, not to be well-behaved: a `Line` carries the call's total
deadline (a timer shuts its socket down, so a trickling reply cannot outlive it) and lets a cancel end
it at once; redirects are not followed and replies are bounded. Failures say why in words that name
no address (they reach callers).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

from npu_worker.engine.base import Interrupted

CONNECT_TIMEOUT = 10.0  # at most this long for a connection (its line can end it sooner)
REPLY_LIMIT = 1 << 20  # a JSON reply
ERROR_BODY_LIMIT = 64 << 10  # what of an error body is read (and at most 2000 characters shown)


class Unavailable(Exception):
    """The upstream could not be asked, or gave no usable answer; `reason` says why (no address)."""

    def __init__(self, reason: str, *, no_reply: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.no_reply = no_reply  # refused or reset before any reply byte: asking again is safe


class Line:
    """The upstream call in flight, for another thread to end (`end`): its socket is shut down, so a
    read blocked on it returns at once. A timer ends it at the call's total deadline."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.why: str | None = None  # "deadline", "interrupted" or "closed", once ended
        self.ended = threading.Event()
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._timer = threading.Timer(timeout, self.end, args=("deadline",))
        self._timer.daemon = True
        self._timer.start()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            if sock is not None and self.why is not None:
                shut(sock)

    def end(self, why: str) -> None:
        with self._lock:
            if self.why is None:
                self.why = why
                self.ended.set()
            if self._sock is not None:
                shut(self._sock)

    def done(self) -> None:
        self._timer.cancel()

    def check(self) -> None:
        """Raise what ended the line, if something did."""
        if self.why == "interrupted":
            raise Interrupted("sovits_worker call stopped")
        if self.why == "closed":
            raise Unavailable("call stopped: the engine is closing")
        if self.why == "deadline":
            raise Unavailable(f"did not answer within {self.timeout:g} s")


def shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@dataclass(frozen=True)
class Upstream:
    """Where the sovits_worker listens, from its checked base URL."""

    https: bool
    host: str
    port: int | None
    prefix: str

    @classmethod
    def of(cls, base: str) -> Upstream:
        parts = urllib.parse.urlsplit(base)
        return cls(parts.scheme == "https", parts.hostname or "", parts.port, parts.path.rstrip("/"))

    def attempt(self, line: Line, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        """(status, bounded body) of one call; Unavailable (why, and whether any reply came) or Interrupted."""
        connect = min(CONNECT_TIMEOUT, line.timeout)
        if self.https:
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, self.port, timeout=connect
            )
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=connect)
        conn._create_connection = connector(line)  # type: ignore[attr-defined]  # http.client's own hook
        try:
            try:
                conn.connect()
                line.attach(conn.sock)
                conn.sock.settimeout(line.timeout)  # the line's timer ends the call sooner
                headers = {"Content-Type": "application/json"} if body is not None else {}
                conn.request(method, self.prefix + path, body=body, headers=headers)
                await_reply(conn.sock)
            except (OSError, http.client.HTTPException) as error:
                line.check()
                raise Unavailable(reason_of(error), no_reply=True) from None
            try:
                response = conn.getresponse()
                status = response.status
                if 300 <= status < 400:
                    raise Unavailable(f"answered {status}, a redirect (not followed)")
                limit = REPLY_LIMIT if status == 200 else ERROR_BODY_LIMIT
                data = response.read(limit + 1)
            except (OSError, http.client.HTTPException, ValueError) as error:
                line.check()
                raise Unavailable(f"sent a broken reply: {reason_of(error)}") from None
            line.check()  # a reply cut short by the line's end may read as a short one
            if response.length and len(data) <= limit:  # http.client returns a short read as it is
                raise Unavailable(f"sent a broken reply: {response.length} bytes fewer than announced")
            if len(data) > limit:
                if status == 200:
                    raise Unavailable(f"sent a reply over {REPLY_LIMIT} bytes")
                data = data[:limit]
            return status, data
        finally:
            line.attach(None)
            conn.close()


def connector(line: Line) -> Callable[..., socket.socket]:
    """`socket.create_connection` for http.client, but each socket is on `line` before it connects: a
    cancel or the deadline shuts it down, and that ends a connect in progress too (an upstream whose
    accept queue was full kept a cancel waiting the whole CONNECT_TIMEOUT). The name look-up is not."""

    def create_connection(
        address: tuple[str, int], timeout: float | None = None, source_address: object = None
    ) -> socket.socket:
        host, port = address
        error: OSError | None = None
        for family, kind, proto, _, sockaddr in socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(timeout)
                line.attach(sock)
                sock.connect(sockaddr)
                return sock
            except OSError as failed:
                line.attach(None)
                sock.close()
                error = failed
                if line.why is not None:  # ended: no other address is tried
                    break
        raise error or OSError("the name resolved to no address")

    return create_connection


def await_reply(sock: socket.socket) -> None:
    """Block until the reply's first byte is there, without taking it: what fails before it (the
    upstream restarting) failed before any reply began, and asking again is safe. TLS cannot peek."""
    if isinstance(sock, ssl.SSLSocket):
        return
    if not sock.recv(1, socket.MSG_PEEK):
        raise ConnectionResetError("closed the connection without a reply")


def reason_of(error: BaseException) -> str:
    """Why a call failed, in words that name no address."""
    if isinstance(error, ConnectionRefusedError):
        return "is unreachable: connection refused"
    if isinstance(error, TimeoutError):
        return "is unreachable: timed out"
    if isinstance(error, OSError) and error.strerror:
        return f"is unreachable: {error.strerror}"
    return f"{type(error).__name__}: {error}"[:300]


def error_text(raw: bytes) -> str:
    """The upstream's `error` field when the body is the error JSON, else the body's text."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and body.get("error"):
        return str(body["error"])[:2000]
    return raw.decode("utf-8", errors="replace").strip()[:2000] or "(no body)"
