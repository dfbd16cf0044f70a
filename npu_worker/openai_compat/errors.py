"""OpenAI's error shape for these routes: `{"error": {"message", "type", "param", "code"}}`.

The v1 routes keep their own body; only handlers wrapped by `openai_errors` answer in this shape, so
an OpenAI SDK raises its usual `BadRequestError` & co. with our message in it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..app_keys import SETTINGS_KEY
from ..protocol import BodyTooLarge, QueueFull, WorkerError

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def with_param(error: WorkerError, param: str) -> WorkerError:
    """Name the request field at fault (OpenAI's `param`)."""
    error.param = param  # type: ignore[attr-defined]
    return error


def openai_error_body(error: BaseException) -> tuple[dict[str, Any], int]:
    """The body and status for any exception (an unexpected one is a 500 `server_error`)."""
    if isinstance(error, WorkerError):
        status, message, code = error.http_status, error.message, error.name
    else:
        status, message, code = 500, f"{type(error).__name__}: {error}", "InternalError"
    kind = ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    param = getattr(error, "param", None)
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}, status


def openai_error_response(error: BaseException) -> web.Response:
    body, status = openai_error_body(error)
    response = web.json_response(body, status=status)
    if isinstance(error, QueueFull):
        response.headers["Retry-After"] = "5"
    return response


def openai_errors(handler: Handler) -> Handler:
    """Render what a handler raises in OpenAI's shape (a response already started is left alone)."""

    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except WorkerError as exc:
            return openai_error_response(exc)
        except web.HTTPRequestEntityTooLarge:
            limit = request.app[SETTINGS_KEY].max_body_bytes
            return openai_error_response(BodyTooLarge(f"the body exceeds {limit} bytes"))
        except web.HTTPException:
            raise
        except Exception as exc:  # noqa: BLE001 - the error body is the contract, even for our own bugs
            log.exception("internal error on %s %s", request.method, request.path)
            return openai_error_response(exc)

    return wrapped
