"""An answer that closes its connection while the caller still sends its body reaches the caller
(npu_worker/lingering_close.py): the worker ends its sending side after the answer and drops what
still arrives, where a close with bytes unread was a reset the caller could not tell from a crash."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from npu_worker import lingering_close, server
from npu_worker.app_keys import BODY_BUDGET_KEY
from tests.body_support import KIB, answer_of, raw_answer
from tests.timing import seconds, until

TRIES = 5  # each reset 5 times in 5 before the fix
PIECE = 16 * KIB
TCP_CLOSE = 7  # (tcp_info's state of a connection reset)


def post(declared: int, extra: bytes = b"") -> bytes:
    """A body request's head; `declared` 0: a chunked body."""
    framing = b"Content-Length: %d\r\n" % declared if declared else b"Transfer-Encoding: chunked\r\n"
    return (
        b"POST /synth_batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + extra
        + framing
        + b"\r\n"
    )


async def keep_sending(writer: asyncio.StreamWriter, limit: int, *, chunked: bool = False) -> None:
    """A caller that goes on sending its body (never past `limit` bytes) after the answer, as one that
    writes its whole body before it reads does; until the connection ends."""
    sent = 0
    piece = b"%x\r\n%s\r\n" % (PIECE, b" " * PIECE) if chunked else b" " * PIECE
    try:
        while sent < limit:
            writer.write(piece)
            sent += PIECE
            await writer.drain()
    except (ConnectionError, OSError):
        pass


async def answered_while_sending(port: int, head: bytes, first: bytes, limit: int) -> bytes:
    """The status line the caller reads (the answer, then the connection's end) while it sends."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    chunked = b"chunked" in head
    writer.write(head + (b"%x\r\n%s\r\n" % (len(first), first) if chunked else first))
    sending = asyncio.create_task(keep_sending(writer, limit, chunked=chunked))
    try:
        status, _, body = await answer_of(reader)
        assert body["status"] == "fail", body
        return status
    finally:
        sending.cancel()
        writer.transport.abort()


REFUSALS = {
    # declared past --max-body-bytes: 413 before a byte is read
    "too_large": (post(1024 * 1024 * KIB), b"413 "),
    # more than the budget holds, sent at once: 503 BodyBudgetFull
    "budget_full": (post(900 * KIB), b"503 "),
    # a coding aiohttp does not decode: 400 before a byte is read
    "coding": (post(0, b"Content-Encoding: br\r\n"), b"400 "),
    # no token: 401, kept alive, its body drained for 1 s (server.LINGER_SECONDS), then closed (64 GiB
    # declared: it is still arriving then)
    "no_token": (post(64 * 1024 * 1024 * KIB), b"401 "),
}


@pytest.mark.parametrize("refusal", REFUSALS)
async def test_an_answer_that_closes_while_the_body_arrives_reaches_its_caller(served, refusal):
    """Before: each of these read ConnectionResetError (the worker closed with the body unread).
    Now: the answer, then the end of the connection."""
    listener = await served(
        max_body_bytes=1024 * KIB,
        body_budget_bytes=256 * KIB,
        token="s3cret" if refusal == "no_token" else None,
    )
    head, expected = REFUSALS[refusal]
    declared = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]) if b"Length" in head else 1 << 30
    for _ in range(TRIES):
        status = await answered_while_sending(listener.port, head, b" " * (300 * KIB), declared - 300 * KIB)
        assert status.startswith(b"HTTP/1.1 " + expected), status
    await until(lambda: not listener.guard.open, "every connection to end")
    assert listener.runner.app[BODY_BUDGET_KEY].held == 0


async def test_headers_refused_as_they_arrive_reach_their_caller(served):
    """A 431 while the headers still arrive (past 64 KiB): the answer, then the connection's end."""
    listener = await served()
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    line = b"X-Filler: " + b"x" * 4000 + b"\r\n"

    async def header_lines() -> None:
        try:
            for _ in range(200):
                writer.write(line)
                await writer.drain()
        except (ConnectionError, OSError):
            pass

    sending = asyncio.create_task(header_lines())
    try:
        status, _, body = await answer_of(reader)
    finally:
        sending.cancel()
        writer.transport.abort()
    assert status.startswith(b"HTTP/1.1 431 "), status
    assert body["error"].startswith("BadRequest: "), body


@pytest.fixture
def short_linger(monkeypatch):
    """A lingering close ends after 0.3 s of silence or 3 s in all (2 s and 5 s in production): long
    enough for a loaded machine's test to see it counted before its end."""
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 0.3)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", seconds(3))


async def test_a_caller_that_sends_for_ever_is_cut_at_the_bound_and_counted_meanwhile(served, short_linger):
    """No slow-loris hole: a caller that trickles after its answer is cut at TOTAL_SECONDS; until then
    its connection is in the guard's table, and holds nothing of the body budget."""
    listener = await served(max_body_bytes=64 * KIB)
    budget = listener.runner.app[BODY_BUDGET_KEY]
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * 1024 * KIB))
    sending = asyncio.create_task(keep_sending(writer, 1024 * 1024 * KIB))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        assert len(listener.guard.open) == 1  # lingering: still counted
        assert budget.held == 0
        async with asyncio.timeout(seconds(10)):
            await sending  # the worker closes it: the caller's writes fail
        await until(lambda: not listener.guard.open, "the lingering connection to end")
    finally:
        sending.cancel()
        writer.transport.abort()


async def test_a_caller_that_stops_sending_and_stays_is_closed_after_its_silence(served, monkeypatch):
    """A caller that read its answer and neither sends nor closes: the connection ends after
    SILENCE_SECONDS (the total bound is out of reach here)."""
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 0.3)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * KIB) + b" " * (128 * KIB))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        await until(lambda: not listener.guard.open, "the silent connection to end")
    finally:
        writer.transport.abort()


async def test_the_shutdown_ends_a_lingering_close(served, monkeypatch):
    """A connection lingering when the worker stops is closed by the shutdown, not waited on."""
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * KIB) + b" " * (128 * KIB))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        assert len(listener.guard.open) == 1
        async with asyncio.timeout(seconds(20)):
            await listener.close()
        assert not listener.guard.open
    finally:
        writer.transport.abort()


async def test_a_lingering_connection_is_evicted_for_a_new_one(served, monkeypatch):
    """At --max-connections a lingering connection gives its place to a new caller."""
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB, max_connections=1)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * KIB) + b" " * (128 * KIB))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        reader2, writer2 = await asyncio.open_connection("127.0.0.1", listener.port)
        writer2.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        async with asyncio.timeout(seconds(10)):
            answer = await reader2.read()
        writer2.close()
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]
    finally:
        writer.transport.abort()


async def test_a_caller_that_ends_its_sending_side_ends_the_linger(served, monkeypatch):
    """The caller's FIN after the answer: nothing more will come, the connection closes then (the
    bounds are out of reach here)."""
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(post(1024 * KIB) + b" " * (128 * KIB))
    try:
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        assert len(listener.guard.open) == 1
        writer.write_eof()
        await until(lambda: not listener.guard.open, "the connection to end at the caller's FIN")
    finally:
        writer.transport.abort()


async def kept_alive_health(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    """GET /health on a kept-alive connection: its status line (the answer read to its end)."""
    writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    async with asyncio.timeout(seconds(10)):
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line[15:]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")
        )
        await reader.readexactly(length)
    return head.split(b"\r\n")[0]


async def test_a_lingering_connection_is_evicted_before_a_kept_alive_one(served, monkeypatch):
    """At --max-connections the connection lingering after its answer gives its place, not a caller's
    kept-alive connection that waits for its next request, however long that one has waited: the
    refused caller has had its answer, the other would lose its connection (it did: both waited for
    headers, the kept-alive one longest)."""
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    listener = await served(max_body_bytes=64 * KIB, max_connections=2)
    kept_reader, kept_writer = await asyncio.open_connection("127.0.0.1", listener.port)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        assert (await kept_alive_health(kept_reader, kept_writer)).startswith(b"HTTP/1.1 200 ")
        writer.write(post(1024 * KIB) + b" " * (128 * KIB))
        status, _, _ = await answer_of(reader)
        assert status.startswith(b"HTTP/1.1 413 ")
        assert len(listener.guard.open) == 2  # the kept-alive one and the lingering one
        third_reader, third_writer = await asyncio.open_connection("127.0.0.1", listener.port)
        third_writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        async with asyncio.timeout(seconds(10)):
            answer = await third_reader.read()
        third_writer.close()
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:80]
        assert (await kept_alive_health(kept_reader, kept_writer)).startswith(b"HTTP/1.1 200 ")
    finally:
        writer.transport.abort()
        kept_writer.transport.abort()


async def test_a_caller_that_reset_before_the_linger_is_closed_without_an_error():
    """A caller's reset that reached the kernel after the answer went but before asyncio read it (its
    reading paused, or the same turn of the loop): the FIN's `shutdown` failed with ENOTCONN, which rose
    out of the access logger as aiohttp's "Unhandled exception" traceback. Now the linger just closes.
    (A real socket pair: the reset is made first, the linger begun on the worker's side after it.)"""
    loop = asyncio.get_running_loop()
    made: asyncio.Future[asyncio.Transport] = loop.create_future()
    lost: asyncio.Future[BaseException | None] = loop.create_future()

    class Paused(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            assert isinstance(transport, asyncio.Transport)
            transport.pause_reading()  # (as aiohttp pauses it for a body no handler reads)
            made.set_result(transport)

        def connection_lost(self, exc: BaseException | None) -> None:
            lost.set_result(exc)

    server = await loop.create_server(Paused, "127.0.0.1", 0)
    try:
        caller = socket.create_connection(server.sockets[0].getsockname()[:2])
        transport = await made
        caller.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        caller.close()  # a reset
        sock = transport.get_extra_info("socket")
        await until(
            lambda: sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == TCP_CLOSE, "the reset"
        )
        lingering_close.LingeringClose(transport)
        assert transport.is_closing()
        async with asyncio.timeout(seconds(10)):
            await lost
    finally:
        server.close()


async def unread_answers(listener, sent: int):
    """A caller that asks for five 404s of about 8 KiB, kept alive, then a sixth whose body (`sent` bytes
    of 1 TiB declared) goes on arriving past aiohttp's drain, and reads none of them, behind small socket
    buffers; once its connection lingers, over 16 KiB of answers wait in the worker. Returns the caller's
    reader, writer and sending task, and the worker's side of the connection."""
    # (the connection the worker accepts inherits its listening socket's send buffer)
    listener.server.sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    caller = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    caller.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    caller.connect(("127.0.0.1", listener.port))
    caller.setblocking(False)
    reader, writer = await asyncio.open_connection(sock=caller)
    writer.transport.pause_reading()  # (it reads nothing until the test says)
    path = b"/no-such-" + b"x" * 8000
    asked = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path * 5
    writer.write(
        asked + b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % (path, 1 << 40)
    )
    sending = asyncio.create_task(keep_sending(writer, sent))
    try:
        await until(lambda: listener.guard.lingering, "the sixth answer's connection to linger")
        worker_side = next(iter(listener.guard.lingering))._lingering._transport  # (what it still holds)
        assert worker_side.get_write_buffer_size() > 16 * KIB
    except BaseException:
        sending.cancel()
        writer.transport.abort()
        raise
    return reader, writer, sending, worker_side


@pytest.fixture
def short_drain(monkeypatch):
    """aiohttp's drain of a kept-alive answer's unread body cut to 0.2 s (1 s in production)."""
    monkeypatch.setattr(server, "LINGER_SECONDS", 0.2)


@pytest.mark.parametrize("ending", ["fin", "silence"])
async def test_the_answers_a_caller_has_not_taken_yet_go_before_the_close(
    served, monkeypatch, short_drain, ending
):
    """A linger that ends with answers not all sent yet (the caller had read none of them): at the
    caller's FIN or after its silence, what is left goes, then the connection closes (it was aborted: a
    reset in place of the rest; 2 of the 6 answers read). (The total bound, the caller still sending,
    still cuts.)"""
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0 if ending == "fin" else 1.0)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    listener = await served()
    # the FIN: sending until the linger; the silence: 256 KiB only, drained by aiohttp before the linger
    reader, writer, sending, worker_side = await unread_answers(
        listener, 1 << 40 if ending == "fin" else 256 * KIB
    )
    try:
        if ending == "fin":
            sending.cancel()
            await until(lambda: not writer.transport.get_write_buffer_size(), "the caller's last piece to go")
            writer.write_eof()
        await until(worker_side.is_closing, f"the linger to end ({ending})")
        writer.transport.resume_reading()
        async with asyncio.timeout(seconds(10)):
            answers = await reader.read()
        assert answers.count(b"HTTP/1.1 404 ") == 6, answers[-200:]
        assert answers.endswith(b"}"), answers[-200:]  # the last one whole
    finally:
        sending.cancel()
        writer.transport.abort()


async def test_an_evicted_linger_drops_what_its_caller_has_not_taken(served, monkeypatch, short_drain):
    """A linger closing after its caller's FIN, its answers unread, evicted for a new connection: its
    socket goes with it (it stayed open, out of the guard's count, until the kernel gave up on the
    caller, 60 s: a caller repeating it held open files past --max-connections)."""
    monkeypatch.setattr(lingering_close, "SILENCE_SECONDS", 600.0)
    monkeypatch.setattr(lingering_close, "TOTAL_SECONDS", 600.0)
    listener = await served(max_connections=1)
    reader, writer, sending, worker_side = await unread_answers(listener, 1 << 40)
    try:
        sending.cancel()
        await until(lambda: not writer.transport.get_write_buffer_size(), "the caller's last piece to go")
        writer.write_eof()
        await until(worker_side.is_closing, "the worker to read the caller's FIN")
        assert worker_side.get_write_buffer_size() > 16 * KIB  # (still waiting for the caller to read)
        status, _, _ = await raw_answer(
            listener.port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        assert status.startswith(b"HTTP/1.1 200 "), status
        await until(lambda: not worker_side.get_write_buffer_size(), "the evicted connection's answers to go")
        assert worker_side.get_extra_info("socket").fileno() == -1  # (its socket closed)
    finally:
        sending.cancel()
        writer.transport.abort()
