"""Whether a request's caller is still there.

aiohttp does not cancel a handler whose client went away (its test server does), and a handler that
writes nothing until its work is done (a `/synth`, a flac or mp3 answer that is encoded whole) would
not find out from a failed write until the end: such handlers look here, and stop the work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from ..connection_hooks import peer_ended, tell_gone
from ..printable import printable

log = logging.getLogger(__name__)

CLIENT_CLOSED_REQUEST = 499  # nginx's status for it: the access log and metrics tell it from a failure
HANG_UP_CHECK_SECONDS = 0.2  # how often a handler that writes nothing yet looks whether its caller is there
WRITE_GRACE_SECONDS = 60.0  # a caller that takes nothing of a write for this long is given up
MIN_READ_BYTES_PER_SECOND = 64 * 1024  # ... plus a second per this many bytes of it
# A request whose work stopped because its caller hung up (`HangUpWatch`): its answer is counted 499.
_HUNG_UP = web.RequestKey("caller_hung_up", bool)


def counted_status(request: web.BaseRequest, response: web.StreamResponse) -> int:
    """The status the access log and `/metrics` count: 499 for a request whose work stopped because its
    caller hung up (a `/synth`'s 200 `Cancelled` answer, which a caller gone never read; one that only
    ended its sending side still reads it), else the answer's own."""
    return CLIENT_CLOSED_REQUEST if request.get(_HUNG_UP) else response.status


def done_all_the_same(request: web.BaseRequest) -> None:
    """A `/synth` whose hang-up's cancel was taken but whose job ended ok all the same (its section
    was done as the cancel came): the work did not stop, and its answer is the 200 with the file,
    which a caller that only ended its sending side reads (it was counted 499). Counted by its own
    status, as a waiting `/synth_batch`'s answer is, unless the connection is closed already."""
    if request.get(_HUNG_UP) and not (request.transport is None or request.transport.is_closing()):
        request[_HUNG_UP] = False


def connection_closed(request: web.BaseRequest) -> bool:
    """The connection is closed: nothing written reaches the caller (a FIN alone still reads)."""
    transport = request.transport
    return transport is None or transport.is_closing()


def caller_gone(request: web.BaseRequest) -> bool:
    """The connection is closed, or the caller ended its sending side (a FIN: the connection stays open
    only to answer a request that looks no further, `connection_guard.GuardedHandler.eof_received`)."""
    transport = request.transport
    return transport is None or transport.is_closing() or peer_ended(request)


async def until_caller_gone(request: web.BaseRequest) -> None:
    """Returns once the caller has gone (looked at every HANG_UP_CHECK_SECONDS): for a handler that
    waits on work and writes nothing meanwhile, raced against that work."""
    while not caller_gone(request):
        await asyncio.sleep(HANG_UP_CHECK_SECONDS)


async def until_closed(request: web.BaseRequest) -> None:
    """Returns once the connection is closed (looked at every HANG_UP_CHECK_SECONDS): after a caller's
    FIN, for a handler whose work is cancelled but whose answer that caller may still read."""
    while not connection_closed(request):
        await asyncio.sleep(HANG_UP_CHECK_SECONDS)


class HangUpWatch:
    """A waiting handler's `cancel` (True: taken) called once its caller has gone, and again every
    HANG_UP_CHECK_SECONDS until it is taken (a `/synth` still admitted off the loop has no live job yet)
    or the wait ends (`end`). Told by the connection where `listen` serves it (`tell_gone`): no timer a
    wait, where an `asyncio.timeout` around each wait was ≈ 20 Python calls on the loop a `/synth`
    (benchmarks/SERVER_OVERHEAD.md, stop 61); elsewhere it looks every HANG_UP_CHECK_SECONDS."""

    def __init__(self, request: web.BaseRequest, cancel: Callable[[], bool]) -> None:
        self._request, self._cancel = request, cancel
        self._timer: asyncio.TimerHandle | None = None
        self._ended = False
        if not tell_gone(request, self._look):
            self._arm()
        elif caller_gone(request):  # gone before it could be told
            self._look()

    def _look(self) -> None:
        self._timer = None
        if self._ended:
            return
        if caller_gone(self._request) and self._cancel():
            self._request[_HUNG_UP] = True
        else:
            self._arm()

    def _arm(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(HANG_UP_CHECK_SECONDS, self._look)

    def end(self) -> None:
        self._ended = True
        if self._timer is not None:
            self._timer.cancel()
        tell_gone(self._request, None)


def stop_if_caller_gone(request: web.BaseRequest) -> None:
    """ConnectionResetError when the caller has gone: the handler ends as on a failed write."""
    if caller_gone(request):
        raise ConnectionResetError("the caller hung up")


def stop_if_closed(request: web.BaseRequest) -> None:
    """ConnectionResetError when the connection is closed; a caller that only ended its sending side
    (a FIN) still reads the answer to work that ran to its end (its cancel came too late)."""
    if connection_closed(request):
        raise ConnectionResetError("the caller hung up")


def left_early(request: web.BaseRequest, error: BaseException) -> web.Response | None:
    """The answer for a handler that ended because its caller left (a body cut short, a reset, a write
    to a closed socket): nobody to tell, so one quiet line, not an error with its traceback and a 500.
    None for anything else.

    The error's traceback is dropped: aiohttp keeps the error of a body cut short on the request's
    stream and raises that same object, so its traceback (the frames of `Request.read`, holding the
    request and the body read so far) made a cycle that only the garbage collector's next full pass
    freed (40 uploads of 8 MiB cut short, a round at a time, grew a worker by 280 MiB a round)."""
    if not isinstance(error, ConnectionError) or not caller_gone(request):
        return None
    error.__traceback__ = None
    log.info("%s %s: the caller went away (%s)", request.method, printable(request.rel_url.raw_path), error)
    return web.Response(status=CLIENT_CLOSED_REQUEST)


async def send_within(request: web.BaseRequest, response: web.StreamResponse, data: bytes) -> None:
    """Write `data`, or give up on a caller that does not take it in time (WRITE_GRACE_SECONDS, plus a
    second per MIN_READ_BYTES_PER_SECOND): a write waits while the caller's socket is full, so a caller
    that stops reading would hold its connection (one of `--max-connections`) and what it was sent for
    as long as it keeps the socket open. ConnectionResetError when given up (the connection is closed)."""
    async with _written_within(request, len(data)):
        await response.write(data)


async def end_within(request: web.BaseRequest, response: web.StreamResponse, data: bytes = b"") -> None:
    """`data` with the response's end (`write_eof`), under `send_within`'s deadline: the end waits for
    the caller's socket to drain even when it adds nothing, so a caller that stopped reading just before
    it held the handler as long as it kept the socket open."""
    async with _written_within(request, len(data)):
        await response.write_eof(data)


@contextlib.asynccontextmanager
async def _written_within(request: web.BaseRequest, size: int) -> AsyncIterator[None]:
    limit = WRITE_GRACE_SECONDS + size / MIN_READ_BYTES_PER_SECOND
    try:
        async with asyncio.timeout(limit):
            yield
    except TimeoutError:
        if request.transport is not None:
            request.transport.abort()
        raise ConnectionResetError(f"the caller read nothing for {limit:.0f} s") from None
