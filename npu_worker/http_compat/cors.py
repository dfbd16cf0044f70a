"""CORS for the JSON API: browsers on an allowed origin may call it, others are refused.

Which origins are allowed is `access.origin_allowed` (loopback by default, else `--allowed-origins`), the
same rule that guards /ws. A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here,
before the token check: browsers never send credentials on a preflight. Real answers get
`Access-Control-Allow-Origin` when the response is prepared, so streamed NDJSON gets it too. A refused
origin gets 403 `OriginNotAllowed` from the access check and no CORS headers, so the browser blocks it.

A preflight allows the headers it asks for (as well-formed names, a bounded list) besides `Authorization`
and `Content-Type`: OpenAI's JavaScript SDK in a browser sends its `X-Stainless-*` headers with every call,
and a preflight that did not name them made the browser block the request. The origin is what is
trusted; a header the worker does not read is ignored. `X-Should-Retry` is exposed with `Retry-After`:
without it the SDK in a page could not see the `false` that keeps it from sending a refused upload again;
`X-Request-Id` too: the OpenAI routes' id of an answer, which the SDK in a page read as null.

aiohttp-cors was not used: it configures CORS route by route, while here one origin rule covers every
route, including those other modules add later.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from aiohttp import web

from ..access import origin_allowed
from ..app_keys import SETTINGS_KEY
from ..protocol import OriginNotAllowed
from .errors import Handler, path_refusals

ALLOW_METHODS = "GET, POST, DELETE, OPTIONS"
ALLOW_HEADERS = ("Authorization", "Content-Type")
EXPOSE_HEADERS = "Retry-After, X-Should-Retry, X-Request-Id"
# RFC 9110 `token`: a header's name. Names beyond these bounds are not echoed (a browser asks for a few).
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")
MAX_ASKED_HEADERS = 32
PREFLIGHT_MAX_AGE = "600"
# What another surface adds to a preflight's 204 on its paths (the OpenAI routes' `x-request-id`): asked
# only when a preflight is answered, where an `on_response_prepare` hook ran for every answer of every
# route (benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 63).
PreflightHeaders = Callable[[web.Request], Mapping[str, str]]
PREFLIGHT_HEADERS_KEY = web.AppKey("preflight_headers", list[PreflightHeaders])


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
    if origin is None:  # in the shape of its path, as every other refusal (OpenAI's under /v1/)
        refused = OriginNotAllowed(f"origin {request.headers.get('Origin')!r} is not allowed")
        return path_refusals(request.app)(request.path, refused, refused.http_status)
    response = web.Response(status=204)
    response.headers.update(
        {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": allowed_headers(
                request.headers.get("Access-Control-Request-Headers")
            ),
            "Access-Control-Max-Age": PREFLIGHT_MAX_AGE,
            "Vary": "Origin, Access-Control-Request-Headers",
        }
    )
    for more in request.app.get(PREFLIGHT_HEADERS_KEY, ()):
        response.headers.update(more(request))
    return response


def allowed_headers(asked: str | None) -> str:
    """`Authorization`, `Content-Type` and the well-formed names a preflight asks for, each once."""
    names = list(ALLOW_HEADERS)
    seen = {name.lower() for name in names}
    for raw in (asked or "").split(",")[:MAX_ASKED_HEADERS]:
        name = raw.strip()
        if HEADER_NAME.fullmatch(name) and name.lower() not in seen:
            seen.add(name.lower())
            names.append(name)
    return ", ".join(names)


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: let an allowed browser origin read the answer (streams included). Every
    answer says `Vary: Origin`, those to no Origin or a refused one too: the Fetch standard's advice for
    an Access-Control-Allow-Origin that echoes the origin, or a cache (the browser's own) keeps the
    answer a navigation got, without the header, and serves it to the page's fetch, which it blocks."""
    origin = _allowed(request) if "Origin" in request.headers else None  # (most answers: no call)
    if origin is not None and "Access-Control-Allow-Origin" not in response.headers:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
    vary_on(response, "Origin")


def vary_on(response: web.StreamResponse, name: str) -> None:
    """Add `name` to the answer's `Vary`, keeping what is there (a pre-compressed file's
    `Accept-Encoding`: it was replaced). Most answers have none yet: named at once, with no list and no
    generator built on the loop (two calls an answer, benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 63)."""
    if "Vary" not in response.headers:
        response.headers["Vary"] = name
        return
    present = [part.strip() for part in response.headers.get("Vary", "").split(",") if part.strip()]
    if not any(part == "*" or part.lower() == name.lower() for part in present):
        response.headers["Vary"] = ", ".join([*present, name])


def setup_cors(app: web.Application) -> None:
    app.on_response_prepare.append(add_cors_headers)
    app.setdefault(PREFLIGHT_HEADERS_KEY, [])
