"""The one place that maps errors to HTTP answers (PROTOCOL §1), plus access checks.

Every failure becomes the fixed error body with a stable error name; a client's mistake is a 4xx,
never a 500; an unexpected exception is a 500 with its traceback in the body (not a bare stack trace).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from ..app_keys import SETTINGS_KEY
from ..protocol import (
    BadRequest,
    BodyTooLarge,
    OriginNotAllowed,
    QueueFull,
    Unauthorized,
    WorkerError,
    error_body,
)

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
PUBLIC_ROUTE_NAMES = ("player-index", "player-file")  # the page itself: it must load to explain a refusal


def error_response(
    error: BaseException, status: int | None = None, with_traceback: bool = False
) -> web.Response:
    code = status or (error.http_status if isinstance(error, WorkerError) else 500)
    trace = traceback.format_exc() if with_traceback else None
    response = web.json_response(error_body(error, trace), status=code)
    if isinstance(error, QueueFull):
        response.headers["Retry-After"] = "5"
    return response


def origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    """No Origin (not a browser) is fine; otherwise the configured list, or loopback by default."""
    if not origin:
        return True
    if allowed:
        return "*" in allowed or origin.rstrip("/") in {a.rstrip("/") for a in allowed}
    host = urlsplit(origin).hostname or ""
    return host in LOOPBACK_HOSTS


def token_ok(request: web.Request, token: str | None) -> bool:
    if not token:
        return True
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer ") and header[7:].strip() == token:
        return True
    return request.query.get("token") == token


def _is_api(path: str) -> bool:
    return path in ("/synth", "/synth_batch", "/ws", "/jobs") or path.startswith("/jobs/")


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    settings = request.app[SETTINGS_KEY]
    origin = request.headers.get("Origin")
    public = request.match_info.route.name in PUBLIC_ROUTE_NAMES
    if not public and not origin_allowed(origin, settings.allowed_origins):
        return error_response(OriginNotAllowed(f"origin {origin} is not allowed"))
    if _is_api(request.path) and not token_ok(request, settings.token):
        return error_response(Unauthorized("a valid token is required (Authorization: Bearer …)"))
    try:
        response = await handler(request)
    except WorkerError as exc:
        response = error_response(exc)
    except web.HTTPRequestEntityTooLarge as exc:
        response = error_response(
            BodyTooLarge(f"the body exceeds {settings.max_body_bytes} bytes"), exc.status
        )
    except web.HTTPNotFound:
        response = error_response(BadRequest(f"no such endpoint: {request.method} {request.path}"), 404)
    except web.HTTPMethodNotAllowed as exc:
        response = error_response(
            BadRequest(f"{request.method} is not allowed on {request.path}"), exc.status
        )
    except web.HTTPException:
        raise
    except Exception as exc:  # noqa: BLE001 - the error body is the contract, even for our own bugs
        log.exception("internal error on %s %s", request.method, request.path)
        response = error_response(exc, 500, with_traceback=True)
    if origin and not response.prepared:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"
    return response
