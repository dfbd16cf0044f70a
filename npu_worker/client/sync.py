"""The pipeline client on the standard library only (urllib), for scripts and threads.

Every call takes `base=` (default: `TTS_WORKER_BASE`, else http://127.0.0.1:7768). Sections that fail
are reported in the result and through `on_progress`; transport failures raise `TransportError`, and a
request the worker refuses as a whole raises `WorkerHTTPError`.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

from npu_worker.client.collector import BatchCollector, ProgressCallback
from npu_worker.client.common import (
    ANSWER_TIMEOUT,
    BODY_LIMIT,
    ERROR_BODY_LIMIT,
    HEAD_CUT,
    LINE_LIMIT,
    answer_of,
    answer_too_slow,
    auth_headers,
    batch_body,
    check_seconds,
    encode_body,
    error_body_of,
    line_too_slow,
    over_limit,
    parse_line,
    resolve_base,
    retry_after_of,
    synth_body,
)
from npu_worker.client.errors import AnswerCut, ClientError, NotConnected, TransportError, WorkerHTTPError
from npu_worker.client.plans import cancel_plan, polling_plan, streaming_plan, synth_plan
from npu_worker.client.retrying import SUBMIT_ATTEMPTS, SUBMIT_DELAY, WAIT_LIMIT
from npu_worker.client.steps import Deliver, Follow, Plan, Sleep
from npu_worker.deadline_thread import WATCHDOG, Armed

_BROKEN = (OSError, http.client.HTTPException, ValueError)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The worker never redirects: a 3xx is its answer (WorkerHTTPError), not a place to go. urllib
    would follow it to any host with the bearer token, and turn a POST into a GET."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Answer(http.client.HTTPResponse):
    """A response that keeps its socket, so that a deadline can cut a read (`_Deadline`)."""

    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp = _LastLine(self.fp.detach())  # (the same socket reader, its last line kept)
        self.socket = sock
        self.head_ended = False  # its blank line came (http.client also ends a head at the close)

    def begin(self) -> None:
        """The head, its last line kept (`_LastLine`): http.client reads a head the close cut short
        as whole, a whole head and no body is no JSON object (WorkerProtocolError, as in aio.py)."""
        super().begin()
        self.head_ended = isinstance(self.fp, _LastLine) and self.fp.last in (b"\r\n", b"\n")


class _LastLine(io.BufferedReader):
    """A socket's reader keeping the last line read (http.client reads a head by lines)."""

    last = b""

    def readline(self, limit: int | None = -1) -> bytes:
        self.last = super().readline(limit)
        return self.last


class _Deadline:
    """Shuts `sock` down once `seconds` have passed, which ends a read blocked on it: the socket's own
    timeout bounds each read only, so a peer that sent a byte each second held a read of a head, a
    line or a body for as long as it liked. `passed` says whether it cut. `sock` may be an `_Answer`,
    for its socket."""

    def __init__(self, sock: Any, seconds: float) -> None:
        self.socket = sock.socket if isinstance(sock, _Answer) else sock
        self.passed = False
        self.seconds = seconds
        self.armed: Armed | None = None

    def __enter__(self) -> _Deadline:
        if self.socket is not None:
            self.armed = WATCHDOG.arm(self.seconds, self._cut)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.armed is not None:
            self.armed.cancel()

    def _cut(self) -> None:
        self.passed = True
        with contextlib.suppress(OSError):  # the plain socket's shutdown (TLS's would drop its state)
            socket.socket.shutdown(self.socket, socket.SHUT_RDWR)  # type: ignore[arg-type]


def _reading_for(connection: type[http.client.HTTPConnection], timeout: float) -> Any:
    """`connection` whose socket, once the answer's head is in, waits `timeout` for each read of the
    body: urllib's one timeout covers the head and the body alike, and the head may be given less."""

    class Reading(connection):  # type: ignore[valid-type,misc]
        response_class = _Answer

        def getresponse(self) -> http.client.HTTPResponse:
            # Taken first: once the answer says `Connection: close` (always: urllib asks for it),
            # getresponse hands the socket to the response and sets `self.sock` to None.
            sock = self.sock
            with _Deadline(sock, self.timeout) as deadline:  # the head, whole within the request's timeout
                try:
                    response = super().getresponse()
                except (OSError, http.client.HTTPException):
                    if not deadline.passed:
                        raise
            if deadline.passed:  # cut, or (barely) in: the socket is shut down either way
                raise TimeoutError(answer_too_slow(self.timeout))
            if sock is not None:  # the response reads through this socket
                sock.settimeout(timeout)
            return response

    return Reading


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, read_timeout: float) -> None:
        super().__init__()
        self.connection = _reading_for(http.client.HTTPConnection, read_timeout)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.connection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, read_timeout: float) -> None:
        super().__init__()
        self.connection = _reading_for(http.client.HTTPSConnection, read_timeout)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self.connection, req)


class _Http:
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
    ) -> None:
        check_seconds(timeout_name, timeout)
        if answer_timeout is not None:
            check_seconds("answer_timeout", answer_timeout)
        self.base = resolve_base(base)
        self.headers = {"Content-Type": "application/json", **auth_headers(token)}
        self.timeout = timeout
        self.answer_timeout = timeout if answer_timeout is None else min(timeout, answer_timeout)
        handlers = (_HTTPHandler(timeout), _HTTPSHandler(timeout))
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect(), *handlers)

    def open(
        self, method: str, path: str, body: Any = None, at_once: bool = False
    ) -> http.client.HTTPResponse:
        data = None if body is None else encode_body(body)
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=self.headers)
        try:
            return self.opener.open(request, timeout=self.answer_timeout if at_once else self.timeout)
        except urllib.error.HTTPError as exc:
            try:
                with _Deadline(exc.fp, self.timeout) as deadline:
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

    def json(
        self, method: str, path: str, body: Any = None, at_once: bool = False
    ) -> tuple[int, dict[str, Any]]:
        response = self.open(method, path, body, at_once)
        where = f"{method} {self.base}{path}"
        if not getattr(response, "head_ended", True):  # http.client ends a head at EOF: before any body
            response.close()
            raise AnswerCut(f"{where}: {HEAD_CUT}")  # (as aio.py says it, whatever framing the head named)
        try:
            with response, _Deadline(response, self.timeout) as deadline:
                raw = response.read(BODY_LIMIT + 1)
        except (OSError, http.client.HTTPException) as exc:
            if not deadline.passed:
                raise AnswerCut(f"{method} {self.base}{path}: {exc}") from exc
        if deadline.passed:
            raise AnswerCut(f"{method} {self.base}{path}: {answer_too_slow(self.timeout)}")
        if len(raw) > BODY_LIMIT:
            raise over_limit(method, self.base + path)
        if response.length:  # http.client hands a body cut short of its Content-Length back as whole
            short = f"the answer ended {response.length} bytes short of its Content-Length"
            raise AnswerCut(f"{method} {self.base}{path}: {short}")  # (aiohttp's reader raises, as here)
        return response.status, answer_of(raw, response.status, response.headers.get("Content-Type"), where)


def _failure_said(exc: BaseException) -> str:
    """What failed, in words: a status line cut short (`HTTP/1.1 `, then the close) is http.client's
    BadStatusLine, whose text is that bare line; one that ended its line is a worker's garbage, quoted."""
    if isinstance(exc, http.client.BadStatusLine) and not isinstance(exc, http.client.RemoteDisconnected):
        line = str(exc.args[0]) if exc.args else ""
        if not line.endswith("\n"):
            return f"{HEAD_CUT} (its status line {line!r})"
    return str(exc)


def health(*, base: str | None = None, token: str | None = None, timeout: float = 10.0) -> dict[str, Any]:
    """GET /health (a 503 while the worker loads raises WorkerHTTPError with the loading body)."""
    return _Http(base, token, timeout).json("GET", "/health")[1]


def synth(
    text: str,
    output_path: str | os.PathLike[str],
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    timeout: float = 600.0,
    on_progress: ProgressCallback | None = None,
    wait_limit: float = WAIT_LIMIT,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth: one text to one wav. A failed synthesis is a 200 body with `status: "fail"`.

    A worker that answers "not now" with a `Retry-After` (503 `Loading` after a start, 429 `QueueFull`)
    is asked again when it says, up to `wait_limit` seconds in a row, as a batch's submission is;
    `on_progress` (if given) gets a `waiting` event (idx -1) before each wait."""
    body = synth_body(text, output_path, lang, speed_factor, ref_wav, **extra)
    plan = synth_plan(body, SUBMIT_ATTEMPTS, SUBMIT_DELAY, wait_limit)
    return _run(plan, _Http(base, token, timeout), BatchCollector(on_progress))


def cancel_job(
    job_id: str,
    *,
    base: str | None = None,
    token: str | None = None,
    timeout: float = 10.0,
    on_progress: ProgressCallback | None = None,
    wait_limit: float = WAIT_LIMIT,
) -> dict[str, Any]:
    """DELETE /jobs/{id}: stop a batch (the sections it finished keep their files). Returns the job's
    status with `cancel_requested` (false when it had already ended); an unknown job raises
    WorkerHTTPError (404 `JobNotFound`). A worker that answers "not now" with a `Retry-After` (loading
    after a restart) is asked again when it says, up to `wait_limit`, each wait a `waiting` event."""
    plan = cancel_plan(job_id, SUBMIT_DELAY, wait_limit)
    return _run(plan, _Http(base, token, timeout), BatchCollector(on_progress))


def _drain(
    response: http.client.HTTPResponse, collector: BatchCollector, line_timeout: float
) -> BaseException | None:
    """Feed a stream's lines to the collector until `done` or EOF; returns what broke it, if anything
    (a TimeoutError when a line took over `line_timeout` as a whole, as the silence it is)."""
    with response:
        while collector.done is None:
            with _Deadline(response, line_timeout) as deadline:
                try:
                    raw = response.readline(LINE_LIMIT + 1)
                except _BROKEN as exc:
                    broken: BaseException | None = exc
                else:
                    broken = None
            if deadline.passed:  # what it read is cut short, or the socket is: re-attached
                return TimeoutError(line_too_slow(line_timeout))
            if broken is not None:
                return broken
            if not raw:
                return None
            event = parse_line(raw)
            if event is not None:
                if gap := collector.gap(event):
                    return gap
                collector.accept(event)  # outside the try: a failing callback is the caller's error
            if stall := collector.stalled():  # each line, heartbeats too: noticed within their interval
                raise stall
    return None


def _run(plan: Plan, http_: _Http, collector: BatchCollector) -> dict[str, Any]:
    """Perform the core's steps over urllib until the plan returns its result. A plan given up on (Ctrl-C
    in `npu-worker batch`, a callback's error) is closed here, its generators in order: left to the
    garbage collector, they were closed at the interpreter's exit in any order, and Python printed
    `Exception ignored in: <generator object polling_plan …> ValueError: generator already executing`
    after the batch's last line."""
    outcome: Any = None
    error: ClientError | None = None
    try:
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(outcome)
            except StopIteration as stop:
                return stop.value
            outcome, error = None, None
            if isinstance(step, Sleep):
                time.sleep(step.seconds)
            elif isinstance(step, Deliver):
                collector.accept(step.event)
            elif isinstance(step, Follow):
                try:
                    response = http_.open(step.method, step.path, step.body, step.at_once)
                except (TransportError, WorkerHTTPError) as exc:
                    error = exc
                    continue
                outcome = _drain(response, collector, http_.timeout)
            else:
                try:
                    outcome = http_.json(step.method, step.path, step.body, step.at_once)[1]
                except (TransportError, WorkerHTTPError) as exc:
                    error = exc

    finally:
        plan.close()


def synth_batch_streaming(
    sections: Iterable[dict[str, Any]],
    on_progress: ProgressCallback | None = None,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    read_timeout: float = 120.0,
    answer_timeout: float = ANSWER_TIMEOUT,
    reattach_attempts: int = 10,
    reattach_delay: float = 0.5,
    wait_limit: float = WAIT_LIMIT,
    stall_limit: float | None = None,
    report_stream_lost: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """POST /synth_batch (NDJSON) and follow it to `done`, re-attaching if the stream breaks.

    `on_progress(idx, event)` is called once per event (idx -1 for events without one), each logged
    event exactly once even across re-attaches. Returns `{"sections", "wav_paths", "errors", ...}`.
    `read_timeout` bounds the wait for each whole line (a peer that trickles bytes sends none); the
    worker's heartbeats, one each 10 s, keep a live stream busy.
    A re-attach waits at most `answer_timeout` for the worker to answer: one that stopped answering
    is given up after about `read_timeout` + (attempts + 2) * `answer_timeout` + the back-off (one: `/health`). One
    that answers "not now" with a `Retry-After` (a 503 `Loading` after a restart, a 429 `QueueFull`)
    is asked again when it says, up to `wait_limit` seconds in a row, without spending the attempts;
    `on_progress` gets a `waiting` event (idx -1) before each wait.
    `report_stream_lost=True`: `on_progress` also gets a `stream_lost` event (idx -1, no `seq`: `job_id`,
    `after`, `error`) when the stream breaks before `done`, before the re-attach; off by default, so a
    callback that reads `event["seq"]` on every event but `waiting` keeps working.
    `stall_limit` (seconds; none by default): give up, raising `Stalled`, once the job has gone that
    long without a new event while the worker keeps it running (heartbeats are no progress; a hung
    engine). Its job is not cancelled. Set it above the slowest section the worker may take, plus its
    turn behind others' sections: an honest section takes minutes on a CPU.
    """
    collector = BatchCollector(on_progress, stall_limit=stall_limit, report_stream_lost=report_stream_lost)
    body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
    plan = streaming_plan(collector, body, reattach_attempts, reattach_delay, wait_limit)
    return _run(plan, _Http(base, token, read_timeout, answer_timeout, "read_timeout"), collector)


def synth_batch_polling(
    sections: Iterable[dict[str, Any]],
    on_progress: ProgressCallback | None = None,
    *,
    base: str | None = None,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    token: str | None = None,
    poll_interval: float = 1.0,
    timeout: float = 60.0,
    answer_timeout: float = ANSWER_TIMEOUT,
    reattach_attempts: int = 10,
    reattach_delay: float = 0.5,
    wait_limit: float = WAIT_LIMIT,
    stall_limit: float | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The same batch in polling mode (`?async=1`), for environments that buffer streamed responses.

    `on_progress` gets a `status` event with the accepted body (its `job_id`, before any poll is
    answered) and whenever the polled status changes, then each section's final event and `done`
    once the job has finished. Same return value as `synth_batch_streaming`.
    `timeout` bounds each wait on the socket and each whole answer's body; a poll's answer is awaited
    to begin at most `answer_timeout`.
    A "not now" with a `Retry-After` is waited for up to `wait_limit`, as in `synth_batch_streaming`;
    `stall_limit` as there, progress being a change of the polled status (`done`, `current_idx`).
    """
    collector = BatchCollector(on_progress, stall_limit=stall_limit)
    body = batch_body(sections, lang, speed_factor, ref_wav, **extra)
    plan = polling_plan(collector, body, poll_interval, reattach_attempts, reattach_delay, wait_limit)
    return _run(plan, _Http(base, token, timeout, answer_timeout), collector)
