"""The transport-free core of the pipeline client; `sync.py` (urllib) and `aio.py` (aiohttp) drive it.

As python-websockets keeps its protocol apart from asyncio, everything that decides does no I/O: here
the base URL, request bodies, the reading of answers (lines, bodies, `Retry-After`) and their bounds;
the errors are `errors.py`'s, the batch collector `collector.py`'s, the retries `retrying.py`'s and
the two batch *plans*, which drive the collector, `plans.py`'s. So re-attaching, polling, back-off and
de-duplication exist once, and a driver is a small loop over its own transport.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import math
import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlsplit

from npu_worker.bearer import holds_bearer_scheme
from npu_worker.client.errors import InvalidArgument, WorkerProtocolError
from npu_worker.worker_words import one_line

DEFAULT_BASE = "http://127.0.0.1:7768"
BASE_ENV = "TTS_WORKER_BASE"

ERROR_BODY_LIMIT = 64 << 10  # what of a refusal's body is read (its `error` is a line)
BODY_LIMIT = 64 << 20  # a JSON answer (a job's result: a few MiB for the most sections a batch may have)
LINE_LIMIT = 128 << 10  # one NDJSON line (an event is a few hundred bytes; aiohttp's own bound too)
# Seconds a re-attach or a poll waits for the worker's answer to begin (a live worker answers them at
# once, a loading one with a 503): a worker that stops answering (SIGSTOP, a hung host) took each try
# the whole read timeout, 11 tries of 120 s before a stream was given up.
ANSWER_TIMEOUT = 10.0
# The most seconds a timeout or an interval may be: more than any run waits, and far below where the
# sync client's socket, timers and time.sleep fail (1e10 s: OverflowError).
MOST_SECONDS = 365 * 86400.0


def resolve_base(base: str | None = None) -> str:
    """`base` if given, else `TTS_WORKER_BASE`, else the default worker address; no trailing slash.
    InvalidArgument unless it is an http(s) URL with a host (and a port that is a number), and no
    query or fragment."""
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
    if "?" in chosen or "#" in chosen:  # each path is appended: it went after the query, or was not sent
        raise InvalidArgument(
            f"the worker URL must be http(s)://HOST[:PORT][/PATH], with no ?query or #fragment, not"
            f" {chosen!r}{where}"
        )
    return chosen.rstrip("/")


def auth_headers(token: str | None) -> dict[str, str]:
    """The bearer header; InvalidArgument for a token no header can carry (a line break, a control or
    non-ASCII character, spaces at its ends, which the worker never reads), and for `Bearer X` (the
    header's value: it went out as `Bearer Bearer X`, a 401 for every request)."""
    if not token:
        return {}
    if token != token.strip() or not all(" " <= char <= "~" for char in token):
        raise InvalidArgument(
            "the token must be printable ASCII, with no line break and no space at its ends"
        )
    if holds_bearer_scheme(token):
        raise InvalidArgument("the token is what follows 'Bearer ' alone, not 'Bearer ' and the token")
    return {"Authorization": f"Bearer {token}"}


def encode_body(body: Any) -> bytes:
    """A request body as JSON, a path (`pathlib.Path`, as a pipeline builds its output paths) as its
    string; InvalidArgument for nan or infinity (json.dumps would write `NaN`, which no JSON parser,
    the worker's included, accepts) and for any other value JSON has no form for (json's TypeError)."""
    try:
        return json.dumps(body, allow_nan=False, default=_path_string).encode("utf-8")
    except ValueError as exc:
        raise InvalidArgument(
            f"the request holds a number JSON cannot carry (nan or infinity): {exc}"
        ) from None
    except TypeError as exc:
        raise InvalidArgument(f"the request holds a value JSON cannot carry: {exc}") from None


def _path_string(value: Any) -> str:
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def check_seconds(name: str, value: Any, zero_allowed: bool = False) -> None:
    """InvalidArgument unless `value` is a finite number of seconds > 0 (≥ 0 where `zero_allowed`), at
    most MOST_SECONDS: a negative or nan `poll_interval` was a ValueError from time.sleep once the
    batch was queued (its job ran on, unnamed), a bad timeout one from the socket, a timeout of 0
    `Operation now in progress`, and 1e10 s (meant as "no limit") an OverflowError from both."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and math.isfinite(value) and (value >= 0 if zero_allowed else value > 0)):
        least = "≥ 0" if zero_allowed else "> 0"
        raise InvalidArgument(f"{name} must be a finite number of seconds {least}, not {value!r}")
    if value > MOST_SECONDS:
        raise InvalidArgument(f"{name} must be at most a year ({MOST_SECONDS:.0f} s), not {value!r}")


def check_count(name: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidArgument(f"{name} must be a whole number ≥ 0, not {value!r}")


def _finite(name: str, value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgument(f"{name} must be a finite number, not {value}")


def synth_body(
    text: str,
    output_path: str | os.PathLike[str],
    lang: str = "ko",
    speed_factor: float = 1.0,
    ref_wav: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    _finite("speed_factor", speed_factor)
    body: dict[str, Any] = {"text": text, "lang": lang, "output_path": output_path}
    body.update(speed_factor=speed_factor, ref_wav=ref_wav)
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
    """The job's path, percent-encoded. The id is the worker's word: a lone surrogate (JSON's `\\ud800`)
    has no UTF-8, and quote's strict encoding raised UnicodeEncodeError (from a poll, or from the note
    of a Ctrl-C'd pipeline in place of its KeyboardInterrupt); `surrogatepass` encodes it as sent."""
    return f"/jobs/{quote(job_id, safe='', errors='surrogatepass')}"


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


def answer_of(raw: bytes, status: int, content_type: str | None, where: str) -> dict[str, Any]:
    """A 2xx answer's JSON object; WorkerProtocolError naming the status and the content type when it
    is none (a proxy's or a captive portal's page): read as an error body, it was a failed synthesis."""
    try:
        body = parse_json(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        body = None
    if isinstance(body, dict):
        return body
    shown = raw[:80].decode("utf-8", "replace")
    raise WorkerProtocolError(
        f"{where}: HTTP {status} with a body that is no JSON object "
        f"(Content-Type: {one_line(content_type or 'none')}): {shown!r}"
    )


def error_body_of(raw: bytes) -> dict[str, Any]:
    """The worker's error body, or a stand-in when the body is not JSON (a proxy's error page)."""
    try:
        body = parse_json(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return {"status": "fail", "error": raw[:200].decode("utf-8", "replace")}
    return body if isinstance(body, dict) else {"status": "fail", "error": str(body)}


def seconds_said(seconds: float) -> str:
    """`seconds` in a message: three significant digits below 100 (0.03, 2.4, 12.5), whole seconds from
    there (268, 1800), never `1.8e+03`, which `:.3g` made of half an hour of waiting."""
    return f"{seconds:.3g}" if abs(seconds) < 99.95 else f"{seconds:.0f}"


def line_too_slow(seconds: float) -> str:
    """Why a stream was cut: a line, a heartbeat included (one each 10 s), must come whole within the
    read timeout; a peer that trickles bytes slower than that keeps no stream open."""
    return f"no whole line within {seconds:g} s (read_timeout): the worker sent too little, too slowly"


HEAD_CUT = "the answer broke off in its head"  # (the status line or a header begun, then the close)
STOPPED_READING = "its read was cut short as the command stopped"  # (`synth`'s `on_reading` cut it)


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
