"""OpenAI's error shape for these routes: `{"error": {"message", "type", "param", "code"}}`.

The v1 routes keep their own body; only handlers wrapped by `openai_errors` answer in this shape, so
an OpenAI SDK raises its usual `BadRequestError` & co. with our message in it.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web

from ..app_keys import SETTINGS_KEY
from ..http_compat.bodies import refusal_response
from ..http_compat.errors import http_reason
from ..http_compat.hang_up import left_early
from ..http_compat.started import end_started, started_response
from ..incidents import internal_error
from ..printable import printable
from ..protocol import (
    BadRequest,
    BodyTooLarge,
    ModelLoadError,
    TooManyVoices,
    Unsupported,
    VoiceExists,
    WorkerError,
)
from .bodies import ErrorDetail, OpenAIError

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


# Refusals a retry within seconds cannot change. OpenAI's SDKs retry every 409 and 5xx (twice, by
# default, resending the whole body: an upload's audio) unless the answer says `x-should-retry: false`.
FINAL_REFUSALS = (VoiceExists, TooManyVoices, ModelLoadError, Unsupported)


# The id of a request's answer (OpenAI's `x-request-id`, an SDK's `_request_id` and its errors'
# `request_id`): its job's id once it has one (the id the worker's log names), else one of its own.
REQUEST_ID_HEADER = "x-request-id"
_REQUEST_ID = web.RequestKey("openai_request_id", str)


def request_id(request: web.Request) -> str:
    """This request's id: the one given to it (`name_request`), else a new `req_` + 16 hex digits."""
    found = request.get(_REQUEST_ID)
    if found is None:
        found = request[_REQUEST_ID] = own_request_id()
    return found


def own_request_id() -> str:
    """An answer's id where no job names it: `req_` + 16 random hex digits."""
    return "req_" + secrets.token_hex(8)


def name_request(request: web.Request, job_id: str) -> str:
    """Its job's id becomes the request's id (said before any answer starts), and is returned."""
    request[_REQUEST_ID] = job_id
    return job_id


def with_param(error: WorkerError, param: str) -> WorkerError:
    """Name the request field at fault (OpenAI's `param`)."""
    error.param = param
    return error


def openai_error(error: BaseException, status: int | None = None) -> tuple[ErrorDetail, int]:
    """OpenAI's error object and the status for any exception (an unexpected one is a 500
    `server_error`); `status` overrides the error's own (a refusal aiohttp's router made)."""
    if isinstance(error, WorkerError):
        own, message, code, param = error.http_status, error.message, error.name, error.param
    else:
        own, message, code, param = 500, f"{type(error).__name__}: {error}", "InternalError", None
    status = status or own
    kind = ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return ErrorDetail(message, kind, param, code), status


def openai_refusal(error: WorkerError, status: int) -> web.Response:
    """A refusal no handler saw under `/v1/` (app_keys.ERROR_SHAPES_KEY: an unknown path, a wrong
    method, an access or `Expect` refusal, the connection guard's), in OpenAI's shape (with `Retry-After`
    where waiting helps) and with an `x-request-id` of its own, as every answer of these routes has
    (these had none: an SDK's `request_id` on the error was None)."""
    detail, status = openai_error(error, status)
    response = refusal_response(error, OpenAIError(detail), status)
    response.headers[REQUEST_ID_HEADER] = own_request_id()
    return response


def unversioned_refusal(error: WorkerError, status: int) -> web.Response:
    """A refusal on a path an OpenAI SDK calls when its base_url lacks `/v1` (`routes.SDK_PATHS`), in
    OpenAI's shape: the SDK drops the v1 body's string `error` (its exception said `Error code: 404`
    alone); a 404 also says where this surface is."""
    if status == 404:
        error = type(error)(
            f"{error.message}; the OpenAI-compatible routes are under /v1/ "
            "(an OpenAI SDK's base_url is http://HOST:PORT/v1)"
        )
    return openai_refusal(error, status)


def openai_error_response(error: BaseException) -> web.Response:
    detail, status = openai_error(error)
    response = refusal_response(error, OpenAIError(detail), status)
    if isinstance(error, FINAL_REFUSALS):
        response.headers["x-should-retry"] = "false"
    return response


def _sse_line(response: web.StreamResponse, error: WorkerError) -> bytes | None:
    """`error` as an SSE stream's `error` event (OpenAI's error object); None for another body (audio)."""
    if response.content_type != "text/event-stream":
        return None
    from .messages import SpeechError  # (messages → request imports this module)

    return b"data: " + SpeechError(openai_error(error)[0]).encode() + b"\n\n"


def openai_errors(handler: Handler) -> Handler:
    """Render what a handler raises in OpenAI's shape (a response already started is left alone)."""

    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        response = await _answer(request)
        if not response.prepared:  # (a started answer said it in its head: `request_id`)
            response.headers.setdefault(REQUEST_ID_HEADER, request_id(request))
        return response

    async def _answer(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except WorkerError as exc:
            return openai_error_response(exc)
        except web.HTTPRequestEntityTooLarge:
            limit = request.app[SETTINGS_KEY].max_body_bytes
            return openai_error_response(BodyTooLarge(f"the body exceeds {limit} bytes"))
        except web.HTTPException as exc:
            started = started_response(request)
            if started is None:  # the middleware answers it, in this surface's shape
                raise
            # after the head (an SSE stream, audio): its own words or a cut, as for any other failure
            refused = BadRequest(http_reason(exc))
            return await end_started(request, started, _sse_line(started, refused), then_end=True)
        except Exception as exc:  # noqa: BLE001 - the error body is the contract, even for our own bugs
            quiet = left_early(request, exc)
            if quiet is not None:
                return quiet
            # the path as sent (still percent-encoded): a caller cannot start a log line of its own
            error = internal_error(log, exc, "on %s %s", request.method, printable(request.rel_url.raw_path))
            started = started_response(request)
            if started is not None:  # an SSE stream or audio under way: no second answer after it
                return await end_started(request, started, _sse_line(started, error), then_end=True)
            return openai_error_response(error)

    return wrapped
