"""The urllib transport of the standard-library client (`sync.py`): one worker address, JSON in and
JSON or a streaming answer out, each answer's head, line and body within a deadline as a whole
(a socket's timeout bounds each read only), errors mapped to the client's classes."""

from __future__ import annotations

import contextlib
import http.client
import io
import socket
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from npu_worker.client.common import (
    BODY_LIMIT,
    ERROR_BODY_LIMIT,
    HEAD_CUT,
    STOPPED_READING,
    answer_of,
    answer_too_slow,
    auth_headers,
    check_seconds,
    encode_body,
    error_body_of,
    over_limit,
    resolve_base,
    retry_after_of,
)
from npu_worker.client.errors import (
    AnswerCut,
    NotConnected,
    TransportError,
    WorkerHTTPError,
    WorkerProtocolError,
    unreached,
)
from npu_worker.deadline_thread import WATCHDOG, Armed
from npu_worker.worker_words import one_line


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The worker never redirects: a 3xx is its answer (WorkerHTTPError), not a place to go. urllib
    would follow it to any host with the bearer token, and turn a POST into a GET."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Answer(http.client.HTTPResponse):
    """A response that keeps its socket, so that a deadline can cut a read (`Deadline`)."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = _LastLine(self.fp.detach())  # (the same socket reader, its last line kept)
        self.socket = sock
        self.head_ended = False  # its blank line came (http.client also ends a head at the close)
        self.stopped = False  # its read cut by `stop` (a command stopped as it read the answer)

    def begin(self) -> None:
        """The head, its last line kept (`_LastLine`): http.client reads a head the close cut short
        as whole, a whole head and no body is no JSON object (WorkerProtocolError, as in aio.py)."""
        super().begin()
        self.head_ended = isinstance(self.fp, _LastLine) and self.fp.last in (b"\r\n", b"\n")

    def stop(self) -> None:
        """End the body's read now, if it is still under way (a signal handler's: it returns at once);
        a body already in, read whole or buffered with the head, is kept: the shutdown ends only a read
        that waits on the socket (and is nothing once the answer is closed)."""
        self.stopped = True
        _shut(self.socket)


class _LastLine(io.BufferedReader):
    """A socket's reader keeping the last line read (http.client reads a head by lines)."""

    last = b""

    def readline(self, limit: int | None = -1) -> bytes:
        self.last = super().readline(limit)
        return self.last


class Deadline:
    """Shuts `sock` down once `seconds` have passed, which ends a read blocked on it: the socket's own
    timeout bounds each read only, so a peer that sent a byte each second held a read of a head, a
    line or a body for as long as it liked. `passed` says whether it cut. `sock` may be an `_Answer`,
    for its socket."""

    def __init__(self, sock: Any, seconds: float) -> None:
        self.socket = sock.socket if isinstance(sock, _Answer) else sock
        self.passed = False
        self.seconds = seconds
        self.armed: Armed | None = None

    def __enter__(self) -> Deadline:
        if self.socket is not None:
            self.armed = WATCHDOG.arm(self.seconds, self._cut)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.armed is not None:
            self.armed.cancel()
            self.armed = None

    def _cut(self) -> None:
        self.passed = True
        _shut(self.socket)


def _shut(sock: Any) -> None:
    """`sock`'s plain shutdown (TLS's would drop its state), which ends a read blocked on it; nothing
    for a socket closed already (its descriptor is -1 then: no other file is touched)."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _reading_for(
    connection: type[http.client.HTTPConnection],
    timeout: float,
    head_in: Callable[[http.client.HTTPResponse], object],
) -> Any:
    """`connection` whose socket, once the answer's head is in, waits `timeout` for each read of the
    body: urllib's one timeout covers the head and the body alike, and the head may be given less.
    `head_in` is told of each answer the moment its head is parsed, before urllib handles it."""

    class Reading(connection):  # type: ignore[valid-type,misc]
        response_class = _Answer

        def getresponse(self) -> http.client.HTTPResponse:
            # Taken first: once the answer says `Connection: close` (always: urllib asks for it),
            # getresponse hands the socket to the response and sets `self.sock` to None.
            sock = self.sock
            with Deadline(sock, self.timeout) as deadline:  # the head, whole within the request's timeout
                try:
                    response = super().getresponse()
                except (OSError, http.client.HTTPException):
                    if not deadline.passed:
                        raise
            if deadline.passed:  # cut, or (barely) in: the socket is shut down either way
                raise TimeoutError(answer_too_slow(self.timeout))
            if sock is not None:  # the response reads through this socket
                sock.settimeout(timeout)
            head_in(response)
            return response

    return Reading


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, read_timeout: float, head_in: Callable[[http.client.HTTPResponse], object]) -> None:
        super().__init__()
        self.connection = _reading_for(http.client.HTTPConnection, read_timeout, head_in)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.connection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, read_timeout: float, head_in: Callable[[http.client.HTTPResponse], object]) -> None:
        super().__init__()
        self.connection = _reading_for(http.client.HTTPSConnection, read_timeout, head_in)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.connection, req)


class _CallersError(Exception):
    """What a caller's `on_reading` raised, carried through urllib's open (called as the head is
    parsed, inside it): an `OSError` there was said as the worker's (`AnswerCut "POST …: <its words>"`)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


class Http:
    """One worker address; JSON in, JSON or a streaming response out, errors mapped to our classes.

    `timeout` bounds each wait on the socket; a call the worker answers at once (`at_once`: a
    re-attach, a poll) waits at most `answer_timeout` for its answer to begin.
    Proxies from the environment are not used: the worker is a local service and an `http_proxy`
    meant for the internet must not swallow loopback traffic (aiohttp behaves the same by default).
    """

    def __init__(
        self,
        base: str | None,
        token: str | None,
        timeout: float,
        answer_timeout: float | None = None,
        timeout_name: str = "timeout",
        on_answer: Callable[[], object] | None = None,
        on_reading: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        check_seconds(timeout_name, timeout)
        if answer_timeout is not None:
            check_seconds("answer_timeout", answer_timeout)
        self.base = resolve_base(base)
        self.headers = {"Content-Type": "application/json", **auth_headers(token)}
        self.timeout = timeout
        self.on_answer = on_answer  # `json`'s 2xx answer read whole (`synth`'s: its work is over)
        self.on_reading = on_reading  # a 2xx answer's head parsed, its body not read: with what cuts it
        self.answer_timeout = timeout if answer_timeout is None else min(timeout, answer_timeout)
        handlers = (_HTTPHandler(timeout, self._head_in), _HTTPSHandler(timeout, self._head_in))
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect(), *handlers)

    def _head_in(self, response: http.client.HTTPResponse) -> None:
        """`on_reading` the moment a 2xx answer's head is parsed: called from `json`, it came after
        urllib's handling and the checks, and a stop in between was 143 for a synthesis over."""
        if self.on_reading is not None and 200 <= response.status < 300 and isinstance(response, _Answer):
            try:
                self.on_reading(response.stop)
            except BaseException as exc:  # its answer let go: a traceback held keeps it, socket and all
                response.close()
                if not isinstance(exc, Exception):
                    raise  # (a KeyboardInterrupt goes through urllib as itself)
                raise _CallersError(exc) from exc

    def open(
        self, method: str, path: str, body: Any = None, at_once: bool = False
    ) -> http.client.HTTPResponse:
        data = None if body is None else encode_body(body)
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=self.headers)
        try:
            return self.opener.open(request, timeout=self.answer_timeout if at_once else self.timeout)
        except _CallersError as raised:  # not the worker's failure: the caller's own, as itself
            callers = raised.error
        except urllib.error.HTTPError as exc:
            try:
                with Deadline(exc.fp, self.timeout) as deadline:
                    raw = exc.read(ERROR_BODY_LIMIT)  # bounded; what came, if it was cut short
            except (OSError, http.client.HTTPException) as broken:  # reset
                if not deadline.passed:
                    raise TransportError(
                        f"{method} {self.base}{path}: HTTP {exc.code}, then {broken!r}"
                    ) from None
            finally:
                exc.close()
            if deadline.passed:
                raise TransportError(f"{method} {self.base}{path}: {answer_too_slow(self.timeout)}") from None
            retry_after = retry_after_of(exc.headers.get("Retry-After"), exc.headers.get("Date"))
            raise WorkerHTTPError(exc.code, error_body_of(raw), retry_after) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            refused = isinstance(getattr(exc, "reason", exc), ConnectionRefusedError)
            sent = not isinstance(exc, urllib.error.URLError)  # (urllib wraps what failed while sending)
            error = NotConnected if refused else AnswerCut if sent else TransportError
            raise error(f"{method} {self.base}{path}: {_failure_said(exc)}") from exc
        # Raised out of the `except`: there it took the carrier as its context, the error it came from
        # as the hook handled another lost (and `from` hid the rest)
        raise callers

    def json(
        self, method: str, path: str, body: Any = None, at_once: bool = False
    ) -> tuple[int, dict[str, Any]]:
        response = self.open(method, path, body, at_once)
        where = f"{method} {self.base}{path}"
        if not getattr(response, "head_ended", True):  # http.client ends a head at EOF: before any body
            response.close()
            raise AnswerCut(f"{where}: {HEAD_CUT}")  # (as aio.py says it, whatever framing the head named)
        try:
            with response, Deadline(response, self.timeout) as deadline:
                raw = response.read(BODY_LIMIT + 1)
        except (OSError, http.client.HTTPException) as exc:
            if not deadline.passed:
                raise AnswerCut(f"{where}: {STOPPED_READING if _stopped(response) else exc}") from exc
        if deadline.passed:
            raise AnswerCut(f"{method} {self.base}{path}: {answer_too_slow(self.timeout)}")
        if len(raw) > BODY_LIMIT:
            raise over_limit(method, self.base + path)
        if response.length:  # http.client hands a body cut short of its Content-Length back as whole
            short = f"the answer ended {response.length} bytes short of its Content-Length"
            short = STOPPED_READING if _stopped(response) else short
            raise AnswerCut(f"{method} {self.base}{path}: {short}")  # (aiohttp's reader raises, as here)
        if _stopped(response) and response.length is None and not response.chunked:
            # A body the close ends (no length, no chunks: an HTTP/1.0 proxy's) ended at the stop's own
            # shutdown, whole or not: whole if it is a JSON object (its part was refused as no JSON, as
            # a worker's garbage, and the stop went unsaid).
            try:
                answer_of(raw, response.status, response.headers.get("Content-Type"), where)
            except WorkerProtocolError:
                raise AnswerCut(f"{where}: {STOPPED_READING}") from None
        if self.on_answer is not None:
            self.on_answer()
        return response.status, answer_of(raw, response.status, response.headers.get("Content-Type"), where)


def _stopped(response: http.client.HTTPResponse) -> bool:
    """Whether `on_reading`'s cut ended the answer's read (a command stopped as it came)."""
    return isinstance(response, _Answer) and response.stopped


def _failure_said(exc: BaseException) -> str:
    """What failed, in words: a status line cut short (`HTTP/1.1 `, then the close) is http.client's
    BadStatusLine, whose text is that bare line; one that ended its line is a worker's garbage, said
    escaped (`one_line`: its escape sequences and line break reached a library user's log as sent).
    What urllib wrapped while connecting or sending is said by its reason alone."""
    if isinstance(exc, http.client.BadStatusLine) and not isinstance(exc, http.client.RemoteDisconnected):
        line = str(exc.args[0]) if exc.args else ""
        if not line.endswith("\n"):
            return f"{HEAD_CUT} (its status line {line!r})"
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc.reason, str):
        # urllib's wrapper said `<urlopen error [Errno 111] Connection refused>`: what failed, in words
        return unreached(exc.reason)
    return one_line(exc)  # (a BadStatusLine's is the worker's whole line, its escapes and line break too)
