"""A connection closed after an answer while its caller still sends (a body answered before it was
read: a 413 by its declared length, a 503 `BodyBudgetFull`, a refused coding, a 401 or 404 whose body
outlasts aiohttp's own drain, a 431): the answer must reach the caller before the connection goes.

Closing a socket with received bytes unread makes Linux send a reset at once, and one that still
receives answers every later segment with a reset: either can reach the caller before it has read the
answer, which it then cannot tell from a crash (RFC 9112 §9.6, nginx's `lingering_close`). Here the
worker ends its sending side after the answer (a FIN), drops whatever still arrives as it arrives (no
parsing, nothing held: the body budget holds none of it), and closes once the caller closes, after
SILENCE_SECONDS with nothing received (what it has not taken yet goes first, as at its close), or
TOTAL_SECONDS after the answer, whichever comes first: a caller that trickles for ever is cut there. The
connection stays in the guard's table meanwhile (`ConnectionGuard.linger`: counted, and evicted before
any other, a caller's kept-alive connection included); the shutdown and an eviction end it at once."""

from __future__ import annotations

import asyncio

SILENCE_SECONDS = 2.0  # nothing received this long: the caller has stopped sending, and read the answer
TOTAL_SECONDS = 5.0  # at most this long after the answer, however the caller trickles


class LingeringClose:
    """One connection's close after its answer: its sending side ended, what arrives dropped, closed
    at its bound (asyncio then tells the connection's protocol it is lost)."""

    def __init__(self, transport: asyncio.Transport, answered_at: float | None = None) -> None:
        """`answered_at` (loop time): when the answer went, where aiohttp drained the body a while
        before this began (a kept-alive 401 or 404): the total bound counts from there, so the caller
        waits TOTAL_SECONDS in all, not aiohttp's drain and TOTAL_SECONDS after it."""
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._until = min(self._last, answered_at or self._last) + TOTAL_SECONDS
        self._timer: asyncio.TimerHandle | None = None
        if not transport.can_write_eof():  # (no half-close on this transport: closed as before)
            self.end()
            return
        transport.resume_reading()  # (aiohttp may have paused it for a body it no longer reads)
        try:
            transport.write_eof()  # the FIN goes once the answer has gone
        except OSError:  # a reset asyncio has not read yet (ENOTCONN): it rose as a traceback
            self.end()
            return
        self._timer = self._loop.call_at(min(self._last + SILENCE_SECONDS, self._until), self._check)

    def received(self) -> None:
        """The caller sent more (dropped unread): its silence starts again."""
        self._last = self._loop.time()

    def _check(self) -> None:
        now = self._loop.time()
        due = min(self._last + SILENCE_SECONDS, self._until)
        if now >= due:
            self.end(flush=due < self._until)  # (silent: nothing arrives to reset what still goes)
        else:
            self._timer = self._loop.call_at(due, self._check)

    def end(self, *, flush: bool = False) -> None:
        """Close now: the total bound passed, the shutdown or an eviction (an answer its caller has not
        taken yet, still in the worker's buffer, is dropped), or the caller ended its sending side or
        fell silent (`flush`: what it has not taken yet goes first; it was aborted, a reset in place
        of the rest). A close that still waits for its caller to take the rest is aborted by a later
        `end` that does not flush: evicted, it kept its socket, out of the guard's count, until the
        kernel gave up on the caller (60 s)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        transport = self._transport
        if transport.get_write_buffer_size() and not flush:
            transport.abort()
        elif not transport.is_closing():
            transport.close()
