"""A WebSocket message must finish arriving within `--body-timeout`, as an HTTP body must.

aiohttp holds a message's frames until the last one is in (up to `--max-body-bytes`) and has no time
bound on that: a peer that trickles one unfinished message kept up to 8 MiB per socket for as long as it
liked (20 such sockets: +173 MiB). aiohttp's reader keeps its partial message in private (compiled) state,
so the watch counts bytes instead: the connection's bytes in (`connection_hooks.bytes_received`) since the handler
last took a whole message, but for the next message's bytes that had come by then (`FrameMasks.unfinished`,
the socket's walk of its frame headers: taken off with the whole one, a first fragment sent right behind
it, or with the handshake, was never timed). While the handler waits for its next message, any such byte is an unfinished
message's (a whole one would have been handed over); while it is busy with one, whole messages may wait in
aiohttp's queue, so only more than UNFINISHED_ALLOWANCE of them count. Either for longer than the body
timeout is a message that does not finish: the socket is closed with 1008 (policy violation), saying so.
(Only past the allowance was timed: a first fragment of 100 bytes, or a trickle that stayed under 64 KiB,
kept its socket for ever; aiohttp's heartbeat pings were answered by the same peer.) Pings and
pongs are taken off the count as the handler reads them (`messages`; aiohttp's autoping is off for it):
4 MiB of pings and no message took a 2 MiB body budget whole, refusing other callers' bodies.

Whatever of a message has arrived is held in the worker's body budget (`body_budget.py`) as it
comes (each piece the connection receives, past the same allowance): a socket whose unfinished message
finds no room there, or whose message is dropped to make room for a newer body, is closed with 1013
(try again later), saying which; its bytes leave the budget at once. Each close is bounded
(`opening.ClosingSockets.close_refusing`): a peer that does not answer it is cut within a second.

While its handler does not read on purpose (the speech stream holds 64 Ki characters and waits), the
watch is paused: whole messages then wait in aiohttp's queue and would be counted as unfinished (aiohttp
stops reading the socket once about 64 KiB wait there, so this is a margin, not a measured failure).
The body budget is not paused: a message that does not finish grows in aiohttp's reader all the same
(the queue holds only whole ones), and what waits in the queue is held memory too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

from aiohttp import WSCloseCode, WSMessage, WSMsgType, web

from ..app_keys import BODY_BUDGET_KEY, CLOSING_SOCKETS_KEY, SETTINGS_KEY
from ..body_budget import BodyBudget, BodyHold
from ..connection_hooks import bytes_received, tell_received
from ..protocol import BodyBudgetFull, WorkerError
from .masked_frames import FrameMasks
from .ping_answers import PingAnswers

log = logging.getLogger(__name__)

UNFINISHED_ALLOWANCE = 64 * 1024  # bytes in since the last whole message before the clock starts
CONTROL_FRAME_HEAD = 6  # a client's ping or pong on the wire, past its payload: 2 bytes and the mask
CHECK_SECONDS = 1.0
# aiohttp hands over a queued message, and the kernel takes an answer, without a wait: a peer's one write
# of 37 000 1-byte messages (its answers read) held the whole worker's loop until the last was answered
# (/health waited 7.4 s). The read loop gives a turn away every this many messages or control frames:
# a ping or pong is handed over without a wait as well, and its pong written at once (37 000 pings in one
# write held /health 0.8-1.5 s while only messages counted). (A turn mid-queue is safe: `took_control` never
# takes off past the bytes received less the unfinished message, `FrameMasks.unfinished`.)
MESSAGES_A_TURN = 16


# Close reasons (RFC 6455: at most 123 bytes), each saying what the peer can do.
NO_ROOM_REASON = "the worker's budget for bodies being received is spent; send the message again shortly"
DROPPED_REASON = "the message was still arriving when a newer body needed its room; send it again"
UNFINISHED_REASON = "the message did not finish arriving within {:g} s (--body-timeout)"


def message_deadline(request: web.Request, ws: web.WebSocketResponse) -> MessageDeadline:
    """The watch for `ws`, opened on `request` (one that never fires where the app is not served by
    `server.listen`, which counts the bytes: aiohttp's own server in tests)."""
    received = bytes_received(request)

    closing = request.app[CLOSING_SOCKETS_KEY]

    def drop(code: int, reason: str) -> None:
        closing.close_refusing(request, ws, code, reason)

    budget = request.app[BODY_BUDGET_KEY]
    frames = getattr(ws, "frames", None)  # (`MaskedFramesResponse`'s walk: both routes open one)
    unfinished = (lambda: frames.unfinished) if isinstance(frames, FrameMasks) else None
    deadline = MessageDeadline(received, request.app[SETTINGS_KEY].body_timeout, drop, budget, unfinished)
    tell_received(request, deadline.received)
    return deadline


async def messages(
    ws: web.WebSocketResponse, deadline: MessageDeadline, pings: PingAnswers
) -> AsyncIterator[WSMessage]:
    """The socket's messages but pings and pongs (`open_socket` turns aiohttp's autoping off): a ping
    is answered (`ping_answers.py`: never waited on here, so the read goes on while the peer's buffers
    are full), and the bytes of both are taken off the deadline's count, since they belong to no
    message (RFC 6455 §5.4: they may come between a message's fragments, which still count). Each
    message is taken off the deadline (`took_message`) as it is handed on."""
    while True:
        if deadline.handed >= MESSAGES_A_TURN:
            deadline.handed = 0
            await asyncio.sleep(0)  # (the loop's other work: see MESSAGES_A_TURN)
        deadline.waiting = True  # every byte in since the last message is now an unfinished message's
        message = await ws.receive()
        deadline.waiting = False
        if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
            return  # (as aiohttp's `async for` ends)
        deadline.handed += 1  # (a ping or pong too: each read and answered without a wait)
        if message.type in (WSMsgType.PING, WSMsgType.PONG):
            deadline.took_control(CONTROL_FRAME_HEAD + len(message.data))
            if message.type == WSMsgType.PING:
                pings.answer(message.data)
            continue
        deadline.took_message()
        yield message
        del message  # (a whole message, up to --max-body-bytes, is not kept while the next is awaited)


class MessageDeadline:
    """One socket's watch; `took_message()` at each whole message, `close()` when the socket ends."""

    def __init__(
        self,
        received: Callable[[], int] | None,
        deadline: float,
        drop: Callable[[int, str], object],
        budget: BodyBudget | None = None,
        unfinished: Callable[[], int] | None = None,
    ) -> None:
        self._received = received or (lambda: 0)
        # The next message's bytes that have come (`FrameMasks.unfinished`): never taken off the count
        # with a whole message or a ping (none where the frames are not walked).
        self._unfinished = unfinished or (lambda: 0)
        self._deadline, self._drop = deadline, drop
        self._mark = self._received() - self._unfinished()  # (one may have come with the handshake)
        self._over_since: float | None = None
        self._paused = False
        self.waiting = False  # the handler awaits the next message: none waits whole in aiohttp's queue
        self.handed = 0  # frames `messages` read (pings too) since it last gave the loop a turn
        self._timer: asyncio.TimerHandle | None = None
        self._hold: BodyHold | None = None
        if received is not None:
            self._timer = asyncio.get_running_loop().call_later(CHECK_SECONDS, self._check)
            if budget is not None:
                self._hold = budget.hold(self._dropped_for_room)

    def took_message(self) -> None:
        """A whole message was read: the count starts again, but for the next message's bytes that came
        already (in the same write, or while this one waited its turn: taken off with it, a first
        fragment sent right behind a message was never timed)."""
        self._mark, self._over_since = self._received() - self._unfinished(), None
        if self._hold is not None:
            self._hold.release()

    def took_control(self, size: int) -> None:
        """A ping or pong of `size` bytes was read: no part of the unfinished message. Never past the
        bytes received: a message's `took_message` already counted the pings queued behind it (one
        write of a message and 52 KiB of pings let the next unfinished message grow 52 KiB past the
        allowance, unheld and untimed)."""
        self._mark = min(self._mark + size, self._received() - self._unfinished())
        self.received()

    def received(self) -> None:
        """Bytes came in: the unfinished message's share of the body budget grows with them."""
        if self._hold is None:  # (paused too: aiohttp reads the socket on, a message grows meanwhile)
            return
        try:
            self._hold.resize(self._received() - self._mark - UNFINISHED_ALLOWANCE)
        except BodyBudgetFull as full:
            self._refused(full, NO_ROOM_REASON)

    def _dropped_for_room(self, error: WorkerError) -> None:
        self._refused(error, DROPPED_REASON)

    def _refused(self, error: WorkerError, reason: str) -> None:
        log.info("a WebSocket message's bytes find no room in the body budget; closing its socket: %s", error)
        self.close()
        self._drop(WSCloseCode.TRY_AGAIN_LATER, reason)

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self.took_message()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    def _check(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(CHECK_SECONDS, self._check)
        allowance = 0 if self.waiting else UNFINISHED_ALLOWANCE
        if self._paused or self._received() - self._mark <= allowance:
            self._over_since = None
            return
        now = time.monotonic()
        if self._over_since is None:
            self._over_since = now
        elif now - self._over_since >= self._deadline:
            log.info(
                "a WebSocket message did not finish arriving within %g s (--body-timeout); "
                "closing its socket",
                self._deadline,
            )
            self.close()
            self._drop(WSCloseCode.POLICY_VIOLATION, UNFINISHED_REASON.format(self._deadline))
