"""A parser refusal handed to the bodies it leaves unfinished (`connection_guard.GuardedHandler`).

Why: aiohttp's C parser, refusing bytes inside a body its handler is reading (a bad chunk size, a chunk
without its CRLF, a bad or an excess trailer), queues its 400 for after that request and drops the body
without ending it: the handler waited for the rest until `--body-timeout`, then answered a 408 that
blamed the network. The parser's error is handed to that body instead, so its reader answers the refusal
at once (`read_body`: 400). So too for a body whose request is queued, not yet served: its headers and
the bad bytes sent in one write (`request_cutter` cuts the piece after the headers, and the request is
queued before the refusal) waited the same. The queue of parsed messages is aiohttp's private state
(`RequestHandler._messages`), read only here and by the guard; without it nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from aiohttp.streams import StreamReader
from aiohttp.web_protocol import _ErrInfo

# aiohttp's queue of parsed messages: (a request's message, or a refusal, and its body)
Queued = Sequence[tuple[object, StreamReader]]


def queued_refusal(queued: Queued | None) -> _ErrInfo | None:
    """The refusal the parser queued last, if it did (it parses nothing after one)."""
    if not queued or not isinstance(last := queued[-1][0], _ErrInfo):
        return None
    return last


def refuse_unfinished_bodies(queued: Queued | None, *others: StreamReader | None) -> None:
    """Each body still arriving, of a request queued before the parser's refusal or of `others` (the
    request served, the one that reached the app), ends now with the refusal's error."""
    refused = queued_refusal(queued)
    if refused is None or queued is None:
        return
    waiting = [body for message, body in queued if not isinstance(message, _ErrInfo)]
    for body in (*waiting, *others):
        if body is not None and not body.is_eof() and body.exception() is None:
            body.set_exception(refused.exc)
            body.feed_eof()  # ended: a handler that never reads it is not read on after its answer
