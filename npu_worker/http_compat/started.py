"""An answer whose head was already sent when its handler failed: no second answer can follow it.

A refusal rendered then went out inside the first answer's body (`HTTP/1.1 500 …` as an NDJSON stream's
next chunk: the caller's HTTP parser failed on it). Instead the stream says so in its own words where it
has some (an NDJSON `error` line, then the connection closes: the job goes on, re-attach with `after=`;
an OpenAI `error` event, then its end); a WebSocket closes with 1011; any other body (audio) is cut, so
a body cut short never reads as whole."""

from __future__ import annotations

import contextlib
import weakref

from aiohttp import WSCloseCode, web

# A weak reference: the request and its response holding each other outlived the request until the next
# full collection (a cut-short body's 8 MiB with them). A handler's failure keeps its response alive in
# the failure's frames, so call `started_response` while handling it.
STARTED_RESPONSE_KEY = web.RequestKey("started_response", weakref.ref[web.StreamResponse])


async def note_started(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """on_response_prepare: the answer this request has begun."""
    request[STARTED_RESPONSE_KEY] = weakref.ref(response)


def started_response(request: web.Request) -> web.StreamResponse | None:
    noted = request.get(STARTED_RESPONSE_KEY)
    return None if noted is None else noted()


async def end_started(
    request: web.Request, response: web.StreamResponse, last_words: bytes | None, then_end: bool = False
) -> web.StreamResponse:
    """End `response` after a failure: `last_words` written, then (`then_end`: an SSE stream, whose
    `error` event is its end) the stream ends as usual, else the connection closes without the body's
    end, so a reader that missed the words still sees a stream cut short, never a whole one; a
    WebSocket closes with 1011. Returned for aiohttp to finish."""
    response.force_close()
    if isinstance(response, web.WebSocketResponse):
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.close(code=WSCloseCode.INTERNAL_ERROR, message=b"internal error")
        return response
    if last_words is not None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await response.write(last_words)
            if then_end:
                return response
    if request.transport is not None:
        request.transport.close()  # what was written goes out first; the chunked body's end never does
    return response
