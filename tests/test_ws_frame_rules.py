"""RFC 6455's rules on the client's side of both socket routes, on a raw socket (aiohttp's and browsers'
clients cannot break them): an unmasked client frame fails the connection with 1002 (§5.1; it was read
and answered), also where it arrives with the handshake; an upgrade over HTTP/1.0 is refused with the
route's 400 (§4.1; it was accepted). `FrameMasks` is walked over frames split at every byte. An aiohttp
whose private hooks the check needs have moved is refused at start-up (it read plain frames, unseen)."""

from __future__ import annotations

import asyncio
import os
import struct

import pytest
from aiohttp import web
from aiohttp.web_protocol import RequestHandler

from npu_worker.ws_server import setup_ws
from npu_worker.ws_server.masked_frames import FrameMasks, missing_aiohttp_hooks
from tests.raw_http import raw_exchange, refusal_of
from tests.timing import seconds

PATHS = [b"/ws", b"/v1/audio/speech/stream"]


def handshake(path: bytes, version: bytes = b"1.1") -> bytes:
    return (
        b"GET " + path + b" HTTP/" + version + b"\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\n\r\n"
    )


def frame(opcode: int, payload: bytes, *, masked: bool) -> bytes:
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, (0x80 if masked else 0) | length)
    elif length < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, (0x80 if masked else 0) | 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, (0x80 if masked else 0) | 127, length)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(byte ^ key[i % 4] for i, byte in enumerate(payload))


async def first_frame_after(
    port: int, path: bytes, sent: bytes, *, with_handshake: bool
) -> tuple[int, bytes]:
    """(opcode, payload) of the first frame the worker sends after `sent`."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        async with asyncio.timeout(seconds(10)):
            writer.write(handshake(path) + (sent if with_handshake else b""))
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 101"), head
            if not with_handshake:
                writer.write(sent)
            first, second = await reader.readexactly(2)
            return first & 0x0F, await reader.readexactly(second & 0x7F)
    finally:
        writer.close()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("with_handshake", [False, True])
async def test_an_unmasked_frame_closes_the_socket_with_1002(served, path, with_handshake):
    listener = await served()
    ping = frame(0x9, b"are you there", masked=False)
    opcode, payload = await first_frame_after(listener.port, path, ping, with_handshake=with_handshake)
    assert (opcode, payload[:2]) == (0x8, struct.pack("!H", 1002))


@pytest.mark.parametrize("path", PATHS)
async def test_a_masked_frame_is_read(served, path):
    listener = await served()
    ping = frame(0x9, b"are you there", masked=True)
    opcode, payload = await first_frame_after(listener.port, path, ping, with_handshake=True)
    assert (opcode, payload) == (0xA, b"are you there")


@pytest.mark.parametrize("path", PATHS)
async def test_an_upgrade_over_http_1_0_is_refused(served, path):
    listener = await served()
    answer = await raw_exchange(listener.port, handshake(path, b"1.0"), seconds(5))
    assert refusal_of(answer) == (
        400,
        "BadRequest",
        "invalid WebSocket handshake: it came as HTTP/1.0, not HTTP/1.1",
    )


def test_the_walk_finds_the_unmasked_frame_across_any_split():
    masked = [frame(0x1, b"x" * size, masked=True) for size in (0, 5, 125, 126, 300, 70000)]
    start = len(b"".join(masked))
    stream = b"".join(masked) + frame(0x1, b"plain", masked=False) + frame(0x1, b"more", masked=True)
    assert FrameMasks().unmasked_at(b"".join(masked)) is None
    assert FrameMasks().unmasked_at(stream) == start
    for cut in [*range(0, len(stream), 499), start - 1, start, start + 1, start + 2]:
        walk = FrameMasks()
        first = walk.unmasked_at(stream[:cut])
        found = first if first is not None else cut + walk.unmasked_at(stream[cut:])
        assert found == (cut if cut == start + 1 else start), cut  # its first byte came before: 0
    walk = FrameMasks()
    one_by_one = [walk.unmasked_at(stream[i : i + 1]) for i in range(start + 2)]
    assert one_by_one == [None] * (start + 1) + [0]


def test_the_walk_counts_the_unfinished_message_across_any_split():
    """`unfinished` (what the message watch times): the bytes of the data message begun and not
    finished, its fragments' headers included, the pings between them not; 0 once its last frame is in."""

    def fragment(opcode: int, payload: bytes) -> bytes:  # no FIN
        whole = frame(opcode, payload, masked=True)
        return bytes([whole[0] & 0x7F]) + whole[1:]

    begun = fragment(0x1, b"a" * 130) + frame(0x9, b"p" * 125, masked=True) + fragment(0x0, b"b" * 5)
    ping = len(frame(0x9, b"p" * 125, masked=True))
    stream = frame(0x1, b"", masked=True) + frame(0x1, b"x" * 300, masked=True) + begun
    at_end = len(begun) - ping
    for cut in range(len(stream) + 1):
        walk = FrameMasks()
        assert walk.unmasked_at(stream[:cut]) is None and walk.unmasked_at(stream[cut:]) is None
        assert walk.unfinished == at_end, cut
    walk = FrameMasks()
    seen = []
    for i in range(len(stream)):
        walk.unmasked_at(stream[i : i + 1])
        seen.append(walk.unfinished)
    assert seen[len(stream) - len(begun) - 1] == 0  # the whole messages before it: nothing unfinished
    assert seen[len(stream) - len(begun) + 5] == 6  # the fragment's first bytes, as they come
    assert seen[-1] == at_end
    walk.unmasked_at(frame(0x0, b"c", masked=True))  # the last fragment
    assert walk.unfinished == 0


def test_the_installed_aiohttp_has_every_hook_the_check_needs():
    assert missing_aiohttp_hooks() == []


def test_an_aiohttp_that_moved_a_hook_is_named():
    class ReaderElsewhere(RequestHandler):  # as an aiohttp that feeds frames to another attribute would
        def data_received(self, data: bytes) -> None:
            self._frames.feed_data(data)  # type: ignore[attr-defined]

    class NoPostStart(web.WebSocketResponse):
        async def prepare(self, request):  # type: ignore[no-untyped-def]
            return await web.StreamResponse.prepare(self, request)

    assert missing_aiohttp_hooks(connection=ReaderElsewhere) == [
        "RequestHandler.data_received uses no _payload_parser (the frame reader each arriving piece is fed to)"
    ]
    assert missing_aiohttp_hooks(response=NoPostStart) == [
        "WebSocketResponse.prepare uses no _post_start (the handshake's end, where the reader is set)"
    ]


def test_an_aiohttp_whose_pong_wait_is_named_otherwise_is_named():
    """`_pong_not_received` re-arms the pong deadline with `_pong_heartbeat` (ws_server/pong_wait.py): an
    aiohttp that named it otherwise passed the check, and a peer still taking at its deadline then met an
    AttributeError in the timer, logged by the loop: no deadline after it, the socket never dropped."""

    class PongWaitElsewhere(web.WebSocketResponse):
        def _send_heartbeat(self) -> None:
            self._pong_response_cb = self._loop.call_later(self._pong_wait_s, self._pong_not_received)  # type: ignore[attr-defined,union-attr]

    assert missing_aiohttp_hooks(response=PongWaitElsewhere) == [
        "WebSocketResponse._send_heartbeat uses no _pong_heartbeat (the pong wait a still-taking peer gets again)"
    ]


def test_the_socket_routes_refuse_to_start_on_such_an_aiohttp(monkeypatch):
    def feeds_another_reader(self, data: bytes) -> None:
        self._frames.feed_data(data)

    monkeypatch.setattr(RequestHandler, "data_received", feeds_another_reader)  # a later aiohttp's
    with pytest.raises(RuntimeError, match=r"unmasked frames .*data_received uses no _payload_parser"):
        setup_ws(web.Application())


async def frames_until_close(port: int, path: bytes, sent: bytes) -> list[tuple[int, bytes]]:
    """(opcode, payload) of every frame the worker sends after `sent` (one write with the handshake),
    up to its close frame."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    seen: list[tuple[int, bytes]] = []
    try:
        async with asyncio.timeout(seconds(10)):
            writer.write(handshake(path) + sent)
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 101"), head
            while not seen or seen[-1][0] != 0x8:
                first, second = await reader.readexactly(2)
                length = second & 0x7F
                if length >= 126:
                    length = int.from_bytes(await reader.readexactly(2 if length == 126 else 8))
                seen.append((first & 0x0F, await reader.readexactly(length)))
    finally:
        writer.close()
    return seen


CONFIG = b'{"type": "session.config", "voice": "default", "model": "tts-1"}'
REFUSED_FRAMES = {  # a frame the socket refuses, and the code it closes with
    "unmasked": (frame(0x1, CONFIG, masked=False), 1002),
    "binary": (frame(0x2, b"\x00\x01", masked=True), 1003),
    "over --max-body-bytes": (frame(0x1, b" " * 5000, masked=True), 1009),  # (a 4 KiB bound below)
}


@pytest.mark.parametrize("refused", REFUSED_FRAMES)
async def test_the_speech_streams_answers_go_out_before_a_refused_frame_closes_it(served, refused):
    """A session.config sent in one write with a refused frame got only the close: the socket answers
    its messages in a task of its own, and the close went first. The answer goes out, then the close
    with the refusal's code, as on `/ws`."""
    listener = await served(max_body_bytes=4096)
    bad, code = REFUSED_FRAMES[refused]
    seen = await frames_until_close(listener.port, PATHS[1], frame(0x1, CONFIG, masked=True) + bad)
    assert [opcode for opcode, _ in seen] == [0x1, 0x8], seen
    assert b'"session.configured"' in seen[0][1], seen
    assert seen[1][1][:2] == struct.pack("!H", code)
