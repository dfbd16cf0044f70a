"""The transport-free core of the pipeline client; `sync.py` (urllib) and `aio.py` (aiohttp) drive it.

As python-websockets keeps its protocol apart from asyncio, everything that decides lives here and does
no I/O: base URL, errors, request bodies and the batch collector; the two batch *plans*, which drive the
collector, are `plans.py`'s. So re-attaching, polling, back-off and de-duplication exist once, and a
driver is a small loop over its own transport.

The collector is fed the events of one batch in the order they arrive — from the first NDJSON stream,
from re-attached streams, or from polled results — and decides which are new (by the job log's `seq`),
calls `on_progress`, and builds the result the user's helper sketch returns:
`{"sections": [...], "wav_paths": [...]}`.
"""

from __future__ import annotations

import datetime
import email.utils
import inspect
import json
import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

DEFAULT_BASE = "http://127.0.0.1:7768"
BASE_ENV = "TTS_WORKER_BASE"

ProgressCallback = Callable[[int, dict[str, Any]], Any]

# Events that are not entries of the job log: keepalives, the polling mode's status snapshots, and the
# client's own `waiting` (the worker answered "not now" with a Retry-After: it loads, its queue is full).
UNLOGGED_EVENTS = frozenset({"heartbeat", "status", "waiting"})
ERROR_BODY_LIMIT = 64 << 10  # what of a refusal's body is read (its `error` is a line)
BODY_LIMIT = 64 << 20  # a JSON answer (a job's result: a few MiB for the most sections a batch may have)
LINE_LIMIT = 128 << 10  # one NDJSON line (an event is a few hundred bytes; aiohttp's own bound too)
# Seconds a re-attach or a poll waits for the worker's answer to begin (a live worker answers them at
# once, a loading one with a 503): a worker that stops answering (SIGSTOP, a hung host) took each try
# the whole read timeout, 11 tries of 120 s before a stream was given up.
ANSWER_TIMEOUT = 10.0


class ClientError(Exception):
    """Base of the errors the client raises (a section's failure is never raised: it is reported)."""


class InvalidArgument(ClientError, ValueError):
    """The call was given what no request can carry: a base that is no http(s) URL, a token with a line
    break, a number JSON has no form for (nan). Raised before anything is sent, in words, where urllib,
    http.client or json would raise their own ValueError from deep inside (or send invalid JSON)."""


class TransportError(ClientError):
    """The worker could not be reached, or a stream broke and could not be re-attached."""


class NotConnected(TransportError):
    """The worker's address refused the connection (nothing listens there now), so nothing of the
    request was sent: a submission may be sent again without making its batch twice."""


class Stalled(TransportError):
    """The job made no progress for `stall_limit` seconds (no new event of its log; polling: no change
    of its status) while the worker kept it running: an engine hung in a call that never returns, a
    job that waits behind others longer than the caller allows. Its job is not cancelled."""


class EngineFailed(TransportError):
    """The worker failed to start: its engine failed to load, or its kept jobs could not be read (its
    /health: 500 `fail`). Restarted so, it runs none of its kept jobs (older workers still answered
    their status `interrupted` and their streams with heartbeats; now a 500). The job runs once a
    worker that loads takes it up; it is not cancelled."""


class WorkerProtocolError(TransportError):
    """The worker sent what the protocol has no place for (a line that is no JSON or over LINE_LIMIT,
    an `ok` without its `idx`). Raised at once: re-attaching would be sent the same log again."""


class WorkerHTTPError(ClientError):
    """The worker refused the whole request (4xx) or failed as a whole (5xx); `body` is its error body."""

    def __init__(
        self, status: int, body: dict[str, Any], retry_after: float | None = None, tried: str = ""
    ) -> None:
        self.status = status
        self.body = body
        self.retry_after = retry_after
        said = f"HTTP {status}: {body.get('error') or body.get('status') or body}"
        super().__init__(f"{tried}; the last answer: {said}" if tried else said)

    @property
    def error_name(self) -> str:
        """The stable error name (`BadRequest`, `QueueFull`, ...) that starts the `error` string."""
        text = str(self.body.get("error") or "")
        return text.split(":", 1)[0].strip()


def resolve_base(base: str | None = None) -> str:
    """`base` if given, else `TTS_WORKER_BASE`, else the default worker address; no trailing slash.
    InvalidArgument unless it is an http(s) URL with a host (and a port that is a number)."""
    chosen = base or os.environ.get(BASE_ENV) or DEFAULT_BASE
    where = "" if base else f" (from {BASE_ENV})"
    try:  # urlsplit itself refuses `http://[::1` (a traceback before)
        parts = urlsplit(chosen)
        parts.port  # noqa: B018 - read for its ValueError
    except ValueError:
        parts = urlsplit("")
    if "@" in parts.netloc:  # urllib sends no user or password: it looked the whole `user:pw@host` up
        raise InvalidArgument(f"the worker URL must not hold a user or password (use --token){where}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgument(f"the worker URL must be http(s)://HOST[:PORT], not {chosen!r}{where}")
    return chosen.rstrip("/")


def auth_headers(token: str | None) -> dict[str, str]:
    """The bearer header; InvalidArgument for a token no header can carry (a line break, a control or
    non-ASCII character, spaces at its ends, which the worker never reads)."""
    if not token:
        return {}
    if token != token.strip() or not all(" " <= char <= "~" for char in token):
        raise InvalidArgument(
            "the token must be printable ASCII, with no line break and no space at its ends"
        )
    return {"Authorization": f"Bearer {token}"}


def encode_body(body: Any) -> bytes:
    """A request body as JSON; InvalidArgument for nan or infinity (json.dumps would write `NaN`, which
    no JSON parser, the worker's included, accepts)."""
    try:
        return json.dumps(body, allow_nan=False).encode("utf-8")
    except ValueError as exc:
        raise InvalidArgument(
            f"the request holds a number JSON cannot carry (nan or infinity): {exc}"
        ) from None


def _finite(name: str, value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgument(f"{name} must be a finite number, not {value}")


def synth_body(
    text: str,
    output_path: str,
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    _finite("speed_factor", speed_factor)
    body = {"text": text, "lang": lang, "output_path": output_path, "speed_factor": speed_factor}
    body["ref_wav"] = ref_wav
    body.update(extra)
    return body


def batch_body(
    sections: Iterable[dict[str, Any]],
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    stream: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """The /synth_batch body; sections without `idx` get their position, as the server does."""
    _finite("speed_factor", speed_factor)
    listed = [dict(section) for section in sections]
    for position, section in enumerate(listed):
        section.setdefault("idx", position)
    body = {
        "sections": listed,
        "lang": lang,
        "speed_factor": speed_factor,
        "ref_wav": ref_wav,
        "stream": stream,
    }
    body.update(extra)
    return body


def job_path(job_id: str) -> str:
    return f"/jobs/{quote(job_id, safe='')}"


def events_path(job_id: str, after: int) -> str:
    return f"{job_path(job_id)}/events?after={after}"


def _no_json_number(name: str) -> Any:
    """Python's json reads NaN and Infinity; no JSON parser does (a `--json` result holding one was
    refused by every reader of it), and the worker never writes one."""
    raise ValueError(f"{name} is no JSON number")


def parse_json(text: str) -> Any:
    """JSON as RFC 8259 has it; ValueError for NaN or Infinity, RecursionError for nesting too deep."""
    return json.loads(text, parse_constant=_no_json_number)


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One NDJSON line, or None for a blank line or a line cut short by a broken connection;
    WorkerProtocolError for a line no worker sends (too long, not UTF-8 JSON, nested too deeply)."""
    if len(raw) > LINE_LIMIT:
        raise WorkerProtocolError(f"the worker sent a line over {LINE_LIMIT} bytes")
    if not raw.endswith(b"\n"):
        return None  # no newline: the stream broke inside this line; it is replayed on re-attach
    try:
        text = raw.decode("utf-8").strip()
        event = parse_json(text) if text else None
    except (ValueError, RecursionError) as exc:
        shown = raw[:80].decode("utf-8", "replace")
        raise WorkerProtocolError(f"the worker sent a line that is not JSON ({exc}): {shown!r}") from None
    return event if isinstance(event, dict) else None


def error_body_of(raw: bytes) -> dict[str, Any]:
    """The worker's error body, or a stand-in when the body is not JSON (a proxy's error page)."""
    try:
        body = parse_json(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return {"status": "fail", "error": raw[:200].decode("utf-8", "replace")}
    return body if isinstance(body, dict) else {"status": "fail", "error": str(body)}


def line_too_slow(seconds: float) -> str:
    """Why a stream was cut: a line, a heartbeat included (one each 10 s), must come whole within the
    read timeout; a peer that trickles bytes slower than that keeps no stream open."""
    return f"no whole line within {seconds:g} s (read_timeout): the worker sent too little, too slowly"


def answer_too_slow(seconds: float) -> str:
    """Why an answer's body was given up (a JSON answer: a poll's, `/health`'s): as a stream's line."""
    return f"no whole answer within {seconds:g} s: the worker sent too little, too slowly"


def over_limit(method: str, url: str) -> WorkerProtocolError:
    return WorkerProtocolError(f"{method} {url}: the worker's answer is over {BODY_LIMIT} bytes")


def retry_after_of(value: str | None, answered: str | None = None) -> float | None:
    """Seconds from a `Retry-After` header: a number of seconds, or an HTTP date (RFC 9110 allows both;
    a date was read as no `Retry-After`, so a worker or a proxy that wrote one had its "not now" spent as
    an attempt), counted from the answer's own `Date` when it has one (the two clocks need not agree),
    else from now; a date already past is 0. None when absent or neither."""
    if value is None:
        return None
    seconds: float | None
    try:
        seconds = float(value)
    except ValueError:
        seconds = _seconds_until(value, answered)
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _seconds_until(when: str, answered: str | None) -> float | None:
    """`when` (an HTTP date) less `answered` (the answer's `Date`), or less now; None if no date."""
    try:
        until = email.utils.parsedate_to_datetime(when)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a day of 10**20
        return None
    try:
        since = email.utils.parsedate_to_datetime(answered) if answered else None
    except (TypeError, ValueError, OverflowError):
        since = None
    since = since or datetime.datetime.now(datetime.UTC)
    return max(0.0, (_gmt(until) - _gmt(since)).total_seconds())


def _gmt(moment: datetime.datetime) -> datetime.datetime:
    """An HTTP date is GMT (RFC 9110), also where it names no zone (asctime's form, `-0000`)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)


@dataclass
class BatchCollector:
    """Feeds each event of a batch to `on_progress` exactly once and gathers the result.

    Logged events carry `seq` (1-based, the job log's order); anything at or below the last seen `seq`
    is a replay and is dropped. A polled result's sections carry no `seq`: they are numbered by arrival.
    Heartbeats (and polled status snapshots) are not logged: they are passed on — callers use them to
    keep RPC layers alive — and never counted.
    """

    on_progress: ProgressCallback | None = None
    job_id: str | None = None
    last_seq: int = 0
    total: int | None = None
    started: dict[str, Any] | None = None
    done: dict[str, Any] | None = None
    ok: dict[int, dict[str, Any]] = field(default_factory=dict)
    errors: dict[int, dict[str, Any]] = field(default_factory=dict)
    delivered: int = 0
    skipped: tuple[int, int] | None = None  # the last skip of seq seen (last seen, then the next one)
    # Seconds the job may go without progress (None: no bound; see `stalled`), and the clock it is read on.
    stall_limit: float | None = None
    clock: Callable[[], float] = time.monotonic
    progressed_at: float = field(init=False)

    def __post_init__(self) -> None:
        if self.stall_limit is not None and not (math.isfinite(self.stall_limit) and self.stall_limit > 0):
            raise InvalidArgument(
                f"stall_limit must be a finite number of seconds > 0, not {self.stall_limit:g}"
            )
        self.progressed_at = self.clock()

    def stalled(self) -> Stalled | None:
        """Why the run ends now: its job has made no progress for `stall_limit` seconds. Progress is a
        new logged event, a changed polled status, or a `waiting` (a worker that loads is bounded by
        `wait_limit` instead). No bound by default: an honest section takes minutes on a CPU (up to
        2 000 characters of text), and a batch waits its turn behind other callers' sections."""
        if self.stall_limit is None or self.clock() - self.progressed_at < self.stall_limit:
            return None
        return Stalled(
            f"job {self.job_id}: no progress for {self.stall_limit:g} s (stall_limit) after event"
            f" {self.last_seq}, while the worker kept it running"
        )

    def gap(self, event: dict[str, Any]) -> TransportError | None:
        """Why a stream's `event` cannot be taken yet: its `seq` skips entries (the worker's log numbers
        them one by one, so the skipped ones were lost on the way); the stream is then re-attached after
        the last seq seen, which sends them again. The same skip once more is the log's own (a Redis log
        with a planted entry moves on past it) and is taken. WorkerProtocolError for a line that is no
        event, or a logged event without its `seq`: numbered by arrival, each re-attach that sent one
        counted as progress, so a worker that sent such a line and hung up was asked again at once,
        for ever (thousands of requests a second)."""
        kind, seq = event.get("event"), event.get("seq")
        if not isinstance(kind, str):
            raise WorkerProtocolError(f"the worker sent a line that is no event: {event}"[:300])
        if kind in UNLOGGED_EVENTS:
            return None
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise WorkerProtocolError(f"the worker sent a {kind} event without its seq: {event}"[:300])
        if seq <= self.last_seq + 1:
            return None
        if self.skipped == (self.last_seq, seq):
            return None
        self.skipped = (self.last_seq, seq)
        return TransportError(f"the stream skipped from seq {self.last_seq} to {seq}")

    def accept(self, event: dict[str, Any]) -> Any:
        """Record `event` if new; returns what `on_progress` returned (an awaitable in async callers)."""
        kind = event.get("event")
        if kind not in UNLOGGED_EVENTS:
            seq = event.get("seq")
            seq = self.last_seq + 1 if not isinstance(seq, int) else seq
            if seq <= self.last_seq:
                return None
            self.last_seq = seq
            self._record(kind, event)
        if kind != "heartbeat":  # a status is delivered only when it changed
            self.progressed_at = self.clock()
        self.delivered += 1
        if self.on_progress is None:
            return None
        idx = event.get("idx")
        return self.on_progress(idx if isinstance(idx, int) else -1, event)

    def _record(self, kind: Any, event: dict[str, Any]) -> None:
        if kind == "start":
            job_id = event.get("job_id")
            if not isinstance(job_id, str) or not job_id:
                raise WorkerProtocolError(f"the worker sent a start without a job_id: {event}"[:300])
            self.started = event
            self.job_id = job_id
            self.total = event.get("total", self.total)
        elif kind == "progress" and event.get("status") == "ok":
            idx = event.get("idx")
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise WorkerProtocolError(
                    f"the worker sent a section's ok without an integer idx: {event}"[:300]
                )
            self.ok[idx] = event
            self.errors.pop(idx, None)
        elif kind == "error":
            idx = event.get("idx")
            self.errors[idx if isinstance(idx, int) else -1] = event
        elif kind == "done":
            self.done = event

    def result(self) -> dict[str, Any]:
        """The sketch's `{"sections", "wav_paths"}` (ok sections in idx order) plus what else is known."""
        sections = [self.ok[idx] for idx in sorted(self.ok)]
        return {
            "sections": sections,
            "wav_paths": [event.get("wav_path") for event in sections],
            "errors": [self.errors[idx] for idx in sorted(self.errors)],
            "job_id": self.job_id,
            "total": self.total,
            "ok_count": len(self.ok),
            "fail_count": len(self.errors),
            "done": self.done,
        }


def result_events(result_body: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-section events of a `/jobs/{id}/result` body, tagged with their kind when it is missing."""
    sections = result_body.get("sections") or []
    if not isinstance(sections, list) or not all(isinstance(section, dict) for section in sections):
        raise WorkerProtocolError("the worker sent a result whose sections are no list of objects")
    events = []
    for section in sections:
        event = dict(section)
        event.setdefault("event", "error" if event.get("status") == "fail" else "progress")
        if not isinstance(event["event"], str):  # a list was a TypeError out of the collector
            raise WorkerProtocolError(f"the worker sent a result section that is no event: {event}"[:300])
        events.append(event)
    return events


def status_event(status_body: dict[str, Any]) -> dict[str, Any]:
    """A polled `/jobs/{id}/status` body (or the accepted one) as an unlogged `status` event (whatever
    `event` the body holds: a list there was a TypeError out of the collector)."""
    return {**status_body, "event": "status"}


def done_event(result_body: dict[str, Any], total: int | None) -> dict[str, Any]:
    """The `done` event of a polled job, built from its `/result` body."""
    sections = result_events(result_body)
    fails = sum(1 for event in sections if event["event"] == "error")
    return {
        "event": "done",
        "total": result_body.get("total", total if total is not None else len(sections)),
        "ok_count": len(sections) - fails,
        "fail_count": fails,
        "elapsed_total_sec": result_body.get("elapsed_total_sec"),
        "cancelled": result_body.get("status") == "cancelled",
    }


async def maybe_await(value: Any) -> None:
    """Lets async callers pass either a plain function or a coroutine function as `on_progress`."""
    if inspect.isawaitable(value):
        await value
