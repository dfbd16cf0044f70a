"""CORS for the JSON API: browsers on an allowed origin may call it, others are refused.

Which origins are allowed is `access.origin_allowed` (loopback by default, else `--allowed-origins`), the
same rule that guards /ws. A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here,
before the token check: browsers never send credentials on a preflight. Real answers get
`Access-Control-Allow-Origin` when the response is prepared, so streamed NDJSON gets it too. A refused
origin gets 403 `OriginNotAllowed` from the access check and no CORS headers, so the browser blocks it.

aiohttp-cors was not used: it configures CORS route by route, while here one origin rule covers every
route, including those other modules add later.
"""

from __future__ import annotations

from aiohttp import web

from ..access import origin_allowed
from ..app_keys import SETTINGS_KEY
from ..protocol import OriginNotAllowed
from .errors import Handler, error_response

ALLOW_METHODS = "GET, POST, DELETE, OPTIONS"
ALLOW_HEADERS = "Authorization, Content-Type"
EXPOSE_HEADERS = "Retry-After"
PREFLIGHT_MAX_AGE = "600"


def _allowed(request: web.Request) -> str | None:
    """The request's Origin if a browser sent one and it is allowed, else None."""
    origin = request.headers.get("Origin")
    if origin is None or not origin_allowed(origin, request.app[SETTINGS_KEY].allowed_origins):
        return None
    return origin


@web.middleware
async def cors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer preflights; everything else goes on to the access check and the handler."""
    if request.method != "OPTIONS" or "Access-Control-Request-Method" not in request.headers:
        return await handler(request)
    origin = _allowed(request)
    if origin is None:
        return error_response(OriginNotAllowed(f"origin {request.headers.get('Origin')!r} is not allowed"))
    response = web.Response(status=204)
    response.headers.update(
        {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": PREFLIGHT_MAX_AGE,
            "Vary": "Origin",
        }
    )
    return response


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: let an allowed browser origin read the answer (streams included)."""
    origin = _allowed(request)
    if origin is not None and "Access-Control-Allow-Origin" not in response.headers:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
        response.headers["Vary"] = "Origin"


def setup_cors(app: web.Application) -> None:
    app.on_response_prepare.append(add_cors_headers)
