"""The refusals the OpenAPI document (`openapi.py`) lists: their statuses on each route and the headers
they carry, read from the tables the server sends them from (`http_compat/errors.OPEN_PATHS`,
`http_compat/bodies.RETRY_AFTER` and `BEARER_CHALLENGE`, `openai_compat/errors.FINAL_REFUSALS`), so the
document cannot promise a refusal header or a status the server does not send, nor miss one it does.
"""

from __future__ import annotations

from typing import Any

ERROR = {"$ref": "#/components/responses/Error"}
OPENAI_ERROR = {"$ref": "#/components/responses/OpenAIError"}

COMMON_ERRORS = (400, 401, 403, 408, 413)
OPENAI_ERRORS = {"4XX": dict(OPENAI_ERROR), "5XX": dict(OPENAI_ERROR)}


def error_refs(*codes: int) -> dict[str, Any]:
    """A route's refusals with these statuses, each in the fixed error body (`ErrorBody`)."""
    return {str(code): dict(ERROR) for code in codes}


# What the middleware (`http_compat/errors.py`) refuses on every route before its handler runs, so the
# route table need not repeat it: a malformed request (400: a body on a request that takes none; 431:
# request headers over 64 KiB; 417: an Expect other than 100-continue; 505: an HTTP version other than
# 1.x) and, but for the player's own files,
# a browser origin or a Host that is not allowed (403), and a missing token where one is configured, but
# for the open routes (401).
PUBLIC_PATHS = ("/", "/{name}")  # the player's page and files (errors.PUBLIC_ROUTE_NAMES)


def with_route_refusals(paths: dict[str, Any]) -> dict[str, Any]:
    """`paths` with the refusals every route can answer, and `security: []` on the routes that need
    no token (the OpenAI routes, under `/v1/`, answer every refusal in their 4XX shape already)."""
    from .http_compat.errors import OPEN_PATHS  # no token: monitoring sees a booting worker

    done: dict[str, Any] = {}
    for path, item in paths.items():
        done[path] = {}
        for method, operation in item.items():
            operation = dict(operation)
            if not path.startswith("/v1/"):
                codes = [400, 417, 431, 505]  # 505: a request line naming HTTP/2.0 or 0.9
                if path not in PUBLIC_PATHS:
                    codes.append(403)
                if path not in PUBLIC_PATHS + OPEN_PATHS:
                    codes.append(401)
                responses = {**error_refs(*codes), **operation["responses"]}
                operation["responses"] = dict(sorted(responses.items()))
            if path in PUBLIC_PATHS + OPEN_PATHS:
                operation["security"] = []
            done[path][method] = operation
    return done


WEBSOCKET_REFUSAL = {"$ref": "#/components/responses/WebSocketRefused"}
OPENAI_WEBSOCKET_REFUSAL = {"$ref": "#/components/responses/OpenAIWebSocketRefused"}


def refusal_responses() -> dict[str, Any]:
    """The document's `components.responses`: the two error bodies, with the headers they carry, and
    each as a socket route's refused handshake (its 400 names the WebSocket version spoken)."""
    return {
        "Error": _refusal("ErrorBody", "the fixed error body"),
        "OpenAIError": _refusal(
            "OpenAIError",
            "the error body of the /v1 routes",
            {**_should_retry_header(), **request_id_header()},
        ),
        "WebSocketRefused": _refusal("ErrorBody", HANDSHAKE_REFUSED, _websocket_version_header()),
        "OpenAIWebSocketRefused": _refusal(
            "OpenAIError",
            HANDSHAKE_REFUSED,
            {**_should_retry_header(), **_websocket_version_header(), **request_id_header()},
        ),
    }


HANDSHAKE_REFUSED = "a refused WebSocket handshake (or another refusal of the request) in the error body"


def _websocket_version_header() -> dict[str, Any]:
    """RFC 6455 §4.2.2: a handshake refused for its version names the one the worker speaks."""
    from .ws_server.opening import WEBSOCKET_VERSION

    return {
        "Sec-WebSocket-Version": {
            "description": "on a handshake whose Sec-WebSocket-Version is missing or not spoken: the one spoken",
            "schema": {"type": "string", "const": WEBSOCKET_VERSION},
        }
    }


def _refusal(schema: str, description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}
    return {"description": description, "content": body, "headers": {**_refusal_headers(), **(headers or {})}}


def _refusal_headers() -> dict[str, Any]:
    """The headers a refusal carries where they help, from the table `refusal_response` sends."""
    from .http_compat.bodies import BEARER_CHALLENGE

    return {
        "Retry-After": retry_after_header(),
        "WWW-Authenticate": {
            "description": "on a 401",
            "schema": {"type": "string", "const": BEARER_CHALLENGE},
        },
    }


def retry_after_header() -> dict[str, Any]:
    """`Retry-After` as every refusal that carries it does (`RETRY_AFTER`): seconds."""
    from .http_compat.bodies import RETRY_AFTER

    said = ", ".join(
        f"{seconds} on a {kind.http_status} {kind.name}" for kind, seconds in RETRY_AFTER.items()
    )
    return {
        "description": f"seconds to wait before sending it again: {said}",
        "schema": {"type": "integer", "enum": sorted(set(RETRY_AFTER.values()))},
    }


def with_status_waits(paths: dict[str, Any]) -> dict[str, Any]:
    """`/health`'s and `/ready`'s 503 with their `Retry-After`: when to ask again, in each state they
    report, as long as a request refused then is told to wait. In their own words: the refusals' wording
    ("5 on a 429 QueueFull") read as if `/ready` answered a 429, which it never does."""
    from .http_compat.bodies import RETRY_AFTER
    from .protocol import Loading, NodeRestarting, QueueFull, QueueUnavailable

    loading = (Loading, "the engine loads, the kept jobs are read, or (an api node) no engine node is alive")
    restarting = (NodeRestarting, "a loop of a Redis node that ended on a bug waits to start again")
    states = {
        "/health": (loading, (QueueUnavailable, "the shared queue (Redis) is unreachable"), restarting),
        "/ready": (
            loading,
            restarting,
            (QueueUnavailable, "the shared queue (Redis) is unreachable or full"),
            (QueueFull, "the queue is full or the worker shuts down"),
        ),
    }
    for path, reported in states.items():
        said = "; ".join(
            f"{RETRY_AFTER[kind]} while {state} (a request is told {kind.name})" for kind, state in reported
        )
        header = {
            "description": f"seconds to wait before asking again: {said}",
            "schema": {"type": "integer", "enum": sorted({RETRY_AFTER[kind] for kind, _ in reported})},
        }
        responses = paths[path]["get"]["responses"]
        responses["503"] = {**responses["503"], "headers": {"Retry-After": header}}
    return paths


def request_id_header() -> dict[str, Any]:
    """OpenAI's `x-request-id`, on every answer of the /v1 routes, refusals made before a handler too."""
    from .openai_compat.errors import REQUEST_ID_HEADER

    return {
        REQUEST_ID_HEADER: {
            "description": "the answer's id: a speech request's job id (16 hex digits), else req_ and 16 hex digits",
            "schema": {"type": "string", "pattern": "^([0-9a-f]{16}|req_[0-9a-f]{16})$"},
        }
    }


def with_request_ids(paths: dict[str, Any]) -> dict[str, Any]:
    """`paths` with `x-request-id` on the /v1 routes' answers (their refusals have it from
    `refusal_responses`); new dicts, the route table is left as it is."""
    done: dict[str, Any] = {}
    for path, item in paths.items():
        done[path] = {method: _with_request_id(operation) for method, operation in item.items()}
        if not path.startswith("/v1/"):
            done[path] = item
    return done


def _with_request_id(operation: dict[str, Any]) -> dict[str, Any]:
    responses = {
        status: {**response, "headers": {**response.get("headers", {}), **request_id_header()}}
        if status.startswith("2")
        else response
        for status, response in operation["responses"].items()
    }
    return {**operation, "responses": responses}


def _should_retry_header() -> dict[str, Any]:
    """OpenAI's SDKs retry a 409 or 5xx unless told not to: the refusals no retry changes say so."""
    from .openai_compat.errors import FINAL_REFUSALS

    return {
        "x-should-retry": {
            "description": f"on {', '.join(kind.name for kind in FINAL_REFUSALS)}: do not send it again",
            "schema": {"type": "string", "const": "false"},
        }
    }
