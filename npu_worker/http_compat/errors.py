"""The one place that maps errors to HTTP answers (PROTOCOL §1), plus access checks.

Every failure becomes the fixed error body with a stable error name; a client's mistake is a 4xx,
never a 500; an unexpected exception is a 500 `InternalError` naming an incident id, its traceback logged
under that id (`incidents.py`); an answer already begun is ended in its own words (`started.py`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from itertools import chain
from typing import NamedTuple

from aiohttp import web

from ..access import check_origin_and_host, check_token, loopback_bind
from ..app_keys import BODY_BUDGET_KEY, ERROR_SHAPES_KEY, SETTINGS_KEY
from ..connection_guard import MAX_HEADER_BYTES, unknown_expect, unspoken_version
from ..incidents import internal_error
from ..printable import printable
from ..protocol import (
    BadRequest,
    BodyBudgetFull,
    BodyTooLarge,
    ErrorBody,
    SectionError,
    WorkerError,
)
from .bodies import refusal_response
from .hang_up import left_early
from .ndjson import ndjson_line
from .query import query_value
from .started import end_started, started_response

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
PUBLIC_ROUTE_NAMES = ("player-index", "player-file")  # the page itself: it must load to explain a refusal
CLOSE_AFTER_KEY = web.RequestKey("close_after", bool)  # answer, then close the connection
# No token and any Host: monitoring must see a booting worker (the origin is still checked).
OPEN_PATHS = ("/health", "/ready")
BODY_HEADERS = frozenset({"content-type", "content-length", "content-encoding"})  # the body's own

JOB_PATH = re.compile(r"/jobs/[^/]+")  # DELETE alone: a GET there wants /status or /result


def error_response(error: BaseException, status: int | None = None) -> web.Response:
    code = status or (error.http_status if isinstance(error, WorkerError) else 500)
    return refusal_response(error, ErrorBody.of(error), code)


def check_request_access(request: web.Request) -> None:
    """The browser-origin and Host rules, then the form of the credentials (`Authorization` or
    `?token=` given twice: 400), then the token, for this request (WorkerError when refused). A refused
    origin is told 403 whatever it sent: its credentials' form is not its business to learn. Where no
    token is asked for (none set, /health, /ready) neither credential is read, so neither is refused
    for being given twice (`?token=` twice was a 400 there, two `Authorization` headers were not)."""
    if request.match_info.route.name in PUBLIC_ROUTE_NAMES:
        return
    settings = request.app[SETTINGS_KEY]
    open_path = request.path in OPEN_PATHS
    check_origin_and_host(
        allowed_origins=settings.allowed_origins,
        origin=request.headers.get("Origin"),
        host=None if open_path else request.headers.get("Host"),
        loopback=loopback_bind(settings.host),
        token_configured=bool(settings.token),
    )
    if not settings.token or open_path:  # no token read here: neither form of it is (given twice too)
        return
    given = request.headers.getall("Authorization", [])
    if len(given) > 1:  # (the first was taken, as `?token=` twice was)
        raise BadRequest(f"the Authorization header is given {len(given)} times; give it once")
    check_token(settings.token, next(iter(given), None), query_value(request, "token"))


async def expect_continue(request: web.Request) -> web.StreamResponse | None:
    """`Expect: 100-continue` on a route that reads a JSON body: the access rules and the declared
    length are decided before the caller is told to send it (aiohttp's own handler said yes to a
    caller without the token, or to 90 MB). A refusal is answered at once and the connection closed;
    a caller gone before it is told to go on is a quiet 499 (it was aiohttp's traceback, each time)."""
    limit = request.app[SETTINGS_KEY].max_body_bytes
    too_large = None
    if request.content_length is not None and request.content_length > limit:
        too_large = BodyTooLarge(f"the body is {request.content_length} bytes; the limit is {limit}")
    return await expect_within(request, too_large)


async def expect_within(request: web.Request, too_large: WorkerError | None) -> web.StreamResponse | None:
    """`expect_continue` for a route with a cap of its own on the declared length (a voice upload's)
    or a check of its own before the body (a batch's `?async=`): `too_large`, its refusal of this
    request (None: it may go on), comes after the access rules and before the body budget's, instead
    of `100 Continue`."""
    answer = _expect_refusal(request, too_large)
    if answer is None and request.version >= (1, 1):
        try:
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # the answer proper is still to come
        except ConnectionError as exc:
            answer = left_early(request, exc)
            if answer is None:
                raise
    if answer is None:
        return None
    answer.force_close()  # the body was never sent
    # aiohttp answers an expect handler's response itself, past the middleware that counts answers
    from .metrics import METRICS_KEY  # (metrics imports this module)

    if (metrics := request.app.get(METRICS_KEY)) is not None:
        body = answer.body
        metrics.count_response(request, answer.status, body if isinstance(body, bytes) else None)
    return answer


def _expect_refusal(request: web.Request, too_large: WorkerError | None) -> web.Response | None:
    """What `expect_continue` answers instead of `100 Continue`, in the error body (None: go on)."""
    try:
        check_request_access(request)
    except WorkerError as exc:
        return _shape_of(request)(exc, exc.http_status)  # the body every access refusal has
    if too_large is not None:
        return _shape_of(request)(too_large, too_large.http_status)
    budget = request.app[BODY_BUDGET_KEY]
    if request.content_length is not None and not budget.has_room(request.content_length):
        budget.refused += 1  # as a body refused while it is read
        full = BodyBudgetFull(
            f"the worker holds {budget.held} bytes of request bodies being received "
            f"(--body-budget-bytes {budget.total}); send it again shortly"
        )
        return _shape_of(request)(full, full.http_status)  # (Retry-After: 1, as when it is read)
    expect = request.headers.get("Expect", "")
    if expect.lower() != "100-continue":  # RFC 9110: 417 (it was aiohttp's text/plain body)
        return _shape_of(request)(BadRequest(f"unknown Expect: {expect[:40]!r}"), 417)
    return None


def header_lines_bytes(raw_headers: tuple[tuple[bytes, bytes], ...]) -> int:
    """The request's header lines as sent (`name: value` and its CRLF), summed by C functions: a
    generator's step a header ran on the loop for every request (benchmarks/SERVER_OVERHEAD.md,
    2026-12-07, stop 62)."""
    return sum(map(len, chain.from_iterable(raw_headers))) + 4 * len(raw_headers)


class _Failed(NamedTuple):
    """How a handler's failure is answered. Only the words of an answer begun are kept, never the
    failure: its traceback holds the middleware's frame, and kept there, the body read so far waited in
    that cycle for a full collection."""

    response: web.StreamResponse
    started: web.StreamResponse | None = None  # an answer the handler began before it failed
    last_words: bytes | None = None  # and what it is told
    final: bool = False  # answered as it is (a caller gone: its quiet 499)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every answer in the error body's contract: the request's head refused before its handler runs,
    and whatever the handler raised, answered in the shape of its path or in an answer already begun."""
    refused = _refused_before_handler(request)
    if refused is not None:
        return refused
    try:
        failed = _Failed(await handler(request))
    except Exception as exc:  # noqa: BLE001 - the error body is the contract, even for our own bugs
        answer = _failure_answer(request, exc)
        if answer is None:
            raise
        failed = answer
    if failed.final:
        return failed.response
    if failed.started is not None and failed.started is not failed.response:  # no second answer after it
        return await end_started(request, failed.started, failed.last_words)
    response = failed.response
    if request.get(CLOSE_AFTER_KEY) and not response.prepared:
        response.force_close()
    return response  # CORS headers: cors.add_cors_headers, when the response is prepared


def _refused_before_handler(request: web.Request) -> web.Response | None:
    """The refusals decided on the request's head, in this order: an HTTP version not spoken (505), the
    access rules, then its framing (`_framing_refusal`); None: the handler runs."""
    if (version := unspoken_version(request)) is not None:
        request[CLOSE_AFTER_KEY] = True  # (its body, if any, is not read)
        unspoken = BadRequest(f"HTTP/{version.major}.{version.minor} is not spoken here; send HTTP/1.1")
        refused = _shape_of(request)(unspoken, 505)
        refused.force_close()
        return refused
    try:
        check_request_access(request)
    except WorkerError as exc:
        refused = _shape_of(request)(exc, exc.http_status)  # OpenAI's under /v1/: its SDKs read it
        # (unrouted_expect, or an unknown Expect, told after the token: the body never asked for is not
        # read, and the answer says so, as the 417 does, where the socket just closed after it)
        if request.get(CLOSE_AFTER_KEY) or unknown_expect(request) is not None:
            refused.force_close()
        return refused
    return _framing_refusal(request)


def _framing_refusal(request: web.Request) -> web.Response | None:
    """Headers over `MAX_HEADER_BYTES` (431), an unknown Expect (417), a body sent to a route that reads
    none (400); each closes the connection, its body unread."""
    if (header_bytes := header_lines_bytes(request.raw_headers)) > MAX_HEADER_BYTES:
        # aiohttp takes 128 lines of 8 KiB: a request kept them (twice: as sent and as text) for as long
        # as its answer ran (a job's events), outside any budget.
        request[CLOSE_AFTER_KEY] = True
        refused = _shape_of(request)(
            BadRequest(f"the request headers are {header_bytes} bytes; the limit is {MAX_HEADER_BYTES}"), 431
        )
        refused.force_close()
        return refused
    if (expect := unknown_expect(request)) is not None:  # RFC 9110: 417 (it was aiohttp's text/plain)
        request[CLOSE_AFTER_KEY] = True  # (its body, if any, is not read)
        refused = _shape_of(request)(BadRequest(f"unknown Expect: {expect[:40]!r}"), 417)
        refused.force_close()
        return refused
    if request.method != "POST" and request.body_exists and not request.content.at_eof():
        # Only POST routes read a body. aiohttp buffered the unread one (twice its 256 KiB read size a
        # connection, outside the body budget) for as long as a long answer (a job's events) ran. (An
        # empty chunked body, its last chunk already in, is no body, as `Content-Length: 0` is.)
        request[CLOSE_AFTER_KEY] = True
        if request.match_info.http_exception is None:  # (a wrong method or path is told so: 405, 404)
            refused = _shape_of(request)(BadRequest(f"a {request.method} request takes no body"), 400)
            refused.force_close()
            return refused
    return None


def _failure_answer(request: web.Request, exc: Exception) -> _Failed | None:
    """A handler's failure in the error body: a WorkerError in its own words, aiohttp's exceptions by
    `_http_refusal`, a caller gone a quiet 499, anything else a 500 naming an incident (None: not a
    failure, a status under 400 raised before any answer began, for aiohttp to send)."""
    if isinstance(exc, WorkerError):
        started = started_response(request)
        last_words = _stream_line(started, exc)
        return _Failed(error_response(exc), started, last_words)
    if isinstance(exc, web.HTTPException):
        return _http_refusal(request, exc)
    quiet = left_early(request, exc)
    if quiet is not None:
        return _Failed(quiet, final=True)
    # the path as sent (still percent-encoded, its controls escaped): no log line of the caller's own
    started = started_response(request)
    failure = internal_error(log, exc, "on %s %s", request.method, printable(request.rel_url.raw_path))
    last_words = _stream_line(started, failure)
    return _Failed(error_response(failure), started, last_words)


def _http_refusal(request: web.Request, exc: web.HTTPException) -> _Failed | None:
    """aiohttp's own refusals (a body too large, no such path or method, a bad WebSocket handshake, a
    missing file...) in the error body, in the shape of their path (OpenAI's under /v1/)."""
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        limit = request.app[SETTINGS_KEY].max_body_bytes
        return _Failed(error_response(BodyTooLarge(f"the body exceeds {limit} bytes"), exc.status))
    if isinstance(exc, web.HTTPNotFound):
        # (escaped: a path the pure-Python parser let through may hold bytes no UTF-8 encoder takes)
        error = BadRequest(f"no such endpoint: {printable(request.method)} {printable(request.path)}")
        return _Failed(_shape_of(request)(error, 404))
    if isinstance(exc, web.HTTPMethodNotAllowed):
        response = _shape_of(request)(BadRequest(method_refused(request.method, request.path)), exc.status)
        response.headers["Allow"] = ", ".join(sorted(exc.allowed_methods))  # RFC 9110: a 405 names them
        return _Failed(response)
    started = started_response(request)  # raised after the answer began: ended in its own words
    if exc.status < 400 and started is None:
        return None
    # with the headers they name (a refused WebSocket version's `Sec-WebSocket-Version`)
    refusal = BadRequest(http_reason(exc))
    last_words = _stream_line(started, refusal)
    response = _shape_of(request)(refusal, max(exc.status, 400))
    for name, value in exc.headers.items():
        if name.lower() not in BODY_HEADERS:
            response.headers.add(name, value)
    return _Failed(response, started, last_words)


def method_refused(method: str, path: str) -> str:
    """A 405's words; `GET /jobs/{id}` (a route for DELETE alone) also says where a job's state and
    result are, the two a caller asking there wants (it said only `GET is not allowed on /jobs/…`)."""
    said = f"{printable(method)} is not allowed on {printable(path)}"
    if method in ("GET", "HEAD") and JOB_PATH.fullmatch(path):
        said += f": a job's state is GET {printable(path)}/status, its result GET {printable(path)}/result"
    return said


def _stream_line(response: web.StreamResponse | None, error: WorkerError) -> bytes | None:
    """`error` as the request-level `error` line (`idx: null`) of an NDJSON stream begun; None for another
    body, or none begun."""
    if response is None or response.content_type != "application/x-ndjson":
        return None
    return ndjson_line(SectionError(idx=None, error=str(error)).encode())


def _shape_of(request: web.Request) -> Callable[[WorkerError, int], web.Response]:
    """The error body for a refusal no handler saw: the v1 one, or the shape its path prefix has."""
    return _shape_for(request.app, request.path)


def _shape_for(app: web.Application, path: str) -> Callable[[WorkerError, int], web.Response]:
    """A key ending in `/` is a prefix, any other one path alone (`/models`: not `/models.json`, the
    player's file namespace)."""
    for key, render in app[ERROR_SHAPES_KEY].items():
        if path.startswith(key) if key.endswith("/") else path == key:
            return render
    return error_response


def path_refusals(app: web.Application) -> Callable[[str, WorkerError, int], web.Response]:
    """For the connection guard: the refusal of a request the app never saw (its headers too large, or
    unparsable), in the shape of the path it names (OpenAI's under /v1/). It says `Vary: Origin` as
    every answer does (PROTOCOL, CORS): the app's `on_response_prepare` that adds it never runs here,
    so a header aiohttp's parser refused or a `br` body went without it."""

    def refusal(path: str, error: WorkerError, status: int) -> web.Response:
        response = _shape_for(app, path)(error, status)
        response.headers["Vary"] = "Origin"
        return response

    return refusal


def http_reason(exc: web.HTTPException) -> str:
    """aiohttp's explanation of a refusal in one line (its text repeats the status line otherwise)."""
    text = " ".join((exc.text or "").split())
    if not text or text.startswith(f"{exc.status}:"):
        return exc.reason
    return text
