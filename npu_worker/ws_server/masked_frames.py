"""Client frames must be masked (RFC 6455 §5.1: a server that receives an unmasked frame fails the
connection): aiohttp's reader unmasked what was masked and took the rest as it came, so a socket route
answered a client that sent plain frames. `MaskedFramesResponse` walks the frames' headers ahead of
aiohttp's reader and, at the first unmasked frame, hands it what came before and then the error that
makes aiohttp close the socket with 1002 (protocol error); nothing of that frame or after is read.
It leans on aiohttp's private hooks (`missing_aiohttp_hooks`, checked at start-up: an aiohttp that
moved them would have read plain frames again, unseen)."""

from __future__ import annotations

from typing import Any

from aiohttp import WSCloseCode, WSMessage, WSMsgType, web
from aiohttp.http_websocket import WebSocketError
from aiohttp.web_protocol import RequestHandler

from .pong_wait import AckWatch

UNMASKED_REASON = "a client frame was not masked (RFC 6455 §5.1)"
_MASK_BIT = 0x80
_FIN_BIT = 0x80
_OPCODE_BITS = 0x0F
_CONTROL_OPCODES = 0x8  # opcodes from 8 up (close, ping, pong) belong to no message
_LENGTH_BITS = 0x7F
_EXTENDED_LENGTH = {126: 2, 127: 8}  # a 7-bit length of 126 or 127: the length follows in 2 or 8 bytes


class FrameMasks:
    """Follows the frames of a byte stream, piece by piece, to find the first one without a mask, and
    counts the bytes of the data message that has begun and not finished (`unfinished`: its frames'
    headers and payloads, not the pings and pongs between them), which the message watch times
    (`message_deadline.py`: the reader's own count is private)."""

    def __init__(self) -> None:
        self._head = b""  # the current frame's header, as far as it has come
        self._payload_left = 0  # bytes of the current frame's payload still to come
        self._in_message = False  # the current frame is a data frame (text, binary, continuation)
        self._ends_message = False  # ... and its message's last (FIN)
        self.unfinished = 0

    def unmasked_at(self, data: bytes) -> int | None:
        """Where in `data` the first unmasked frame begins (0 where it began in an earlier piece), or
        None: every frame so far is masked."""
        pos = 0
        while pos < len(data):
            if self._payload_left:
                step = min(self._payload_left, len(data) - pos)
                self._payload_left -= step
                pos += step
                self._count(step)
                continue
            began = pos - len(self._head)
            while len(self._head) < (size := _header_size(self._head)) and pos < len(data):
                piece = data[pos : pos + size - len(self._head)]
                self._head += piece
                pos += len(piece)
                if self._head[0] & _OPCODE_BITS < _CONTROL_OPCODES:
                    self.unfinished += len(piece)
                if len(self._head) >= 2 and not self._head[1] & _MASK_BIT:
                    return max(began, 0)
            if len(self._head) < _header_size(self._head):
                return None  # the header goes on in the next piece
            self._payload_left = _payload_length(self._head)
            self._in_message = self._head[0] & _OPCODE_BITS < _CONTROL_OPCODES
            self._ends_message = bool(self._head[0] & _FIN_BIT)
            self._head = b""
            self._count(0)
        return None

    def _count(self, payload: int) -> None:
        """`payload` more bytes of the current frame came; its message ends with its last one."""
        if self._in_message:
            self.unfinished += payload
            if not self._payload_left and self._ends_message:
                self.unfinished = 0


def _header_size(head: bytes) -> int:
    if len(head) < 2:
        return 2
    return 2 + _EXTENDED_LENGTH.get(head[1] & _LENGTH_BITS, 0) + (4 if head[1] & _MASK_BIT else 0)


def _payload_length(head: bytes) -> int:
    extended = _EXTENDED_LENGTH.get(head[1] & _LENGTH_BITS)
    if extended is None:
        return head[1] & _LENGTH_BITS
    return int.from_bytes(head[2 : 2 + extended], "big")


# Each private hook `MaskedFramesResponse` uses: the function of aiohttp's that must name it, and why.
_HOOKS = (
    (web.WebSocketResponse, "prepare", "_post_start", "the handshake's end, where the reader is set"),
    (web.WebSocketResponse, "_post_start", "set_parser", "the frame reader handed to the connection"),
    (RequestHandler, "set_parser", "_message_tail", "the bytes that came with the handshake"),
    (RequestHandler, "data_received", "_payload_parser", "the frame reader each arriving piece is fed to"),
    (web.WebSocketResponse, "_send_heartbeat", "_pong_response_cb", "the pong deadline a ping sets"),
    (web.WebSocketResponse, "_send_heartbeat", "_pong_not_received", "what that deadline calls"),
    (
        web.WebSocketResponse,
        "_send_heartbeat",
        "_pong_heartbeat",
        "the pong wait a still-taking peer gets again",
    ),
)


def missing_aiohttp_hooks(
    response: type = web.WebSocketResponse, connection: type = RequestHandler
) -> list[str]:
    """The private hooks of aiohttp's that `MaskedFramesResponse` needs and this aiohttp lacks (each a
    line saying which); [] where all are there. Read from the functions' code: one that no longer names
    the hook (or is no longer Python code) counts as lacking it."""
    classes = {web.WebSocketResponse: response, RequestHandler: connection}
    missing = []
    for owner, function, hook, what in _HOOKS:
        code = getattr(getattr(classes[owner], function, None), "__code__", None)
        if code is None or hook not in code.co_names:
            missing.append(f"{owner.__name__}.{function} uses no {hook} ({what})")
    return missing


def require_aiohttp_hooks() -> None:
    """RuntimeError at start-up where this aiohttp lacks a hook: the sockets would have read unmasked
    client frames again, unseen, or failed at each handshake."""
    import aiohttp

    if missing := missing_aiohttp_hooks():
        raise RuntimeError(
            f"aiohttp {aiohttp.__version__} is not one npu-worker's sockets can refuse unmasked frames with "
            f"(ws_server/masked_frames.py): {'; '.join(missing)}"
        )


class _MaskedFramesOnly:
    """aiohttp's frame reader behind the walk: the connection feeds this instead."""

    def __init__(self, reader: Any, messages: Any) -> None:
        self._reader = reader
        self._messages = messages  # the queue the socket's `receive` reads: the error goes there
        self.walk = FrameMasks()
        self._failed = False

    def feed_data(self, data: bytes | bytearray | memoryview) -> tuple[bool, bytes]:
        if self._failed:
            return True, b""
        data = bytes(data)
        cut = self.walk.unmasked_at(data)
        if cut is None:
            return self._reader.feed_data(data)  # type: ignore[no-any-return]
        if cut:
            self._reader.feed_data(data[:cut])  # the messages before it are answered, in order
        self._failed = True
        self._messages.set_exception(WebSocketError(WSCloseCode.PROTOCOL_ERROR, UNMASKED_REASON))
        return True, b""

    def feed_eof(self) -> None:
        self._reader.feed_eof()


class _RefusalToTheRoute:
    """aiohttp's message queue, but the reader's refusal of a frame (unmasked, over-long) comes out of
    `receive` once as an ERROR message, the socket still open, instead of after aiohttp has closed it:
    a route that answers its messages in a task of its own sends what it owes first, then closes with
    the refusal's code (`WebSocketError.code`). Later reads raise it, as aiohttp's own close expects."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        self._told = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)

    async def read(self) -> Any:
        try:
            return await self._queue.read()
        except WebSocketError as exc:
            if self._told:
                raise
            self._told = True
            return WSMessage(WSMsgType.ERROR, exc, None)


class MaskedFramesResponse(web.WebSocketResponse):
    """aiohttp's socket, refusing unmasked client frames; what came with the handshake is walked too."""

    frames: FrameMasks | None = None  # the walk, once the handshake is done
    _pong_wait: AckWatch | None = None

    def _send_heartbeat(self) -> None:
        pending = self._pong_response_cb
        super()._send_heartbeat()
        if self._pong_response_cb is not None and self._pong_response_cb is not pending:  # a ping went out
            self._pong_wait = AckWatch()
            self._pong_wait.start(self._req.transport if self._req is not None else None)

    def _pong_not_received(self) -> None:
        """A peer still taking what was sent before the ping gets another pong wait (`pong_wait.py`);
        one that took nothing since the ping (or the last wait) is dropped, as aiohttp does."""
        transport = self._req.transport if self._req is not None else None
        if self._pong_wait is not None and self._loop is not None and self._pong_wait.still_taking(transport):
            self._pong_response_cb = self._loop.call_later(self._pong_heartbeat, self._pong_not_received)
            return
        super()._pong_not_received()

    def refusals_to_the_route(self) -> None:
        """A frame the reader refuses reaches the route before the socket closes (`_RefusalToTheRoute`);
        the route closes it (with `message.data.code`)."""
        if self._reader is not None and not isinstance(self._reader, _RefusalToTheRoute):
            self._reader = _RefusalToTheRoute(self._reader)  # type: ignore[assignment]

    def _post_start(self, request: web.BaseRequest, protocol: str | None, writer: Any) -> None:
        connection: Any = request.protocol
        arrived, connection._message_tail = connection._message_tail, b""  # else fed to aiohttp's reader
        super()._post_start(request, protocol, writer)
        checked = _MaskedFramesOnly(connection._payload_parser, self._reader)
        self.frames = checked.walk  # (`message_deadline` reads its `unfinished`)
        connection._payload_parser = checked
        if arrived:
            checked.feed_data(arrived)
