"""Whether a request's caller is still there.

aiohttp does not cancel a handler whose client went away (its test server does), and a handler that
writes nothing until its work is done (a `/synth`, a flac or mp3 answer that is encoded whole) would
not find out from a failed write until the end: such handlers look here, and stop the work.
"""

from __future__ import annotations

from aiohttp import web


def caller_gone(request: web.BaseRequest) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def stop_if_caller_gone(request: web.BaseRequest) -> None:
    """ConnectionResetError when the caller has gone: the handler ends as on a failed write."""
    if caller_gone(request):
        raise ConnectionResetError("the caller hung up")
