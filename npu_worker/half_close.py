"""A caller that ends its sending side (a FIN) once its requests are whole is answered
(`connection_guard.GuardedHandler.eof_received`).

Why: aiohttp closed the connection at the FIN, before its answer: a caller that sends a request and
half-closes (`printf 'GET /health HTTP/1.0\\r\\n\\r\\n' | nc -N`, a health check's probe) got nothing,
not even to a `/health`. Once the requests it sent are whole (their headers, and their bodies), the
connection stays open to answer them and closes after the last; a handler that looks whether its caller
is there (`hang_up.caller_gone`: `/synth`, the OpenAI speech routes) finds it gone and stops, as at any
FIN. A request cut short, an unfinished body and a WebSocket close at once, as before. (aiohttp's private
state is read, never changed: where it is missing, the connection closes.)
"""

from __future__ import annotations

from collections.abc import Sequence

from aiohttp.streams import StreamReader


def requests_whole(
    queued: Sequence[tuple[object, StreamReader]] | None,
    serving: StreamReader | None,
    *,
    headers_begun: bool,
    draining: bool,
    upgraded: bool,
) -> bool:
    """Whether the caller sent requests not yet answered, all whole: no headers begun since, each body
    in, no WebSocket. `queued`: aiohttp's parsed requests not yet served (None: that state is missing);
    `serving`: the body of the one being served; `draining`: an answered request's body still arrives."""
    if queued is None or headers_begun or draining or upgraded:
        return False
    bodies = [body for _, body in queued]
    if serving is not None:
        bodies.append(serving)
    return bool(bodies) and all(body.is_eof() for body in bodies)
