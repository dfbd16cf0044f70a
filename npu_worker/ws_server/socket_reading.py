"""What both socket routes (`/ws`, the OpenAI speech stream) set up to read a socket, in one place:
the message deadline (`message_deadline.py`), the send deadline's drop (`opening.drop_untaken`) and
the ping answers (`ping_answers.py`), with their grace (`opening.send_grace`). Each route
built the three itself, in its own order, and ended them in its own `finally`: a bound added to one
route's reading could be missed by the other's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from aiohttp import web
from aiohttp.http_websocket import WSMessage

from ..app_keys import SETTINGS_KEY
from .message_deadline import MessageDeadline, message_deadline, messages
from .opening import drop_untaken, send_grace
from .ping_answers import PingAnswers


class SocketReading:
    """One socket's reading: `messages()` its messages but pings and pongs, each taken off the message
    deadline as it is handed on; `abort` drops the peer that takes nothing of a send; `close()` ends
    the deadline and the ping answers with the handler."""

    def __init__(self, request: web.Request, ws: web.WebSocketResponse) -> None:
        grace = send_grace(request.app[SETTINGS_KEY])
        self._ws = ws
        self.deadline: MessageDeadline = message_deadline(request, ws)
        # (the session's sends and the pongs: one peer, one drop)
        self.abort: Callable[[], None] = drop_untaken(request, ws, grace)
        self.pings = PingAnswers(request, ws, grace, self.abort)

    def messages(self) -> AsyncIterator[WSMessage]:
        """`message_deadline.messages` itself, which takes each off the deadline (no second generator a
        message on the `/ws` hot path)."""
        return messages(self._ws, self.deadline, self.pings)

    def close(self) -> None:
        self.deadline.close()
        self.pings.close()
