"""The connection cap on a real socket: who is evicted (a trickler, a slow body, an idle WebSocket) so a
health check still gets in, a new connection refused when every one is in use, and the open-file limit."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from npu_worker import open_connections
from npu_worker.http_compat.metrics import METRICS_KEY
from tests.raw_http import HEALTH_REQUEST, raw_exchange
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine
from tests.worker_process import start_worker_process


async def test_over_the_cap_the_oldest_trickler_is_evicted_and_health_answers(served):
    listener = await served(max_connections=20, header_timeout=60.0)
    socks = []
    for _ in range(40):
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(b"GET / HTTP/1.1\r\n")
        socks.append((reader, writer))
    async with asyncio.timeout(seconds(10)):
        answer = await raw_exchange(
            listener.port,
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            seconds(10),
        )
    assert answer.startswith(b"HTTP/1.1 200")
    assert len(listener.guard.open) <= 20 and listener.guard.evicted >= 20
    assert closed_by_guard(listener, "evicted") == listener.guard.evicted
    for _, writer in socks:
        writer.close()


async def test_over_the_cap_the_longest_arriving_body_is_evicted_and_health_answers(
    served, monkeypatch, tmp_path
):
    """Sockets that send their headers at once and then trickle a body were all "in use": at the cap
    a health check was refused for as long as they kept coming back (each for `--body-timeout`). A
    request whose body is in (running) is never the one closed."""
    monkeypatch.setattr(open_connections, "SLOW_BODY_SECONDS", 0.0)
    engine = ToneEngine()
    engine.gate = threading.Event()  # the running /synth stays in use
    listener = await served(engine=engine, max_connections=4, body_timeout=60.0)
    body = json.dumps({"text": "held", "output_path": str(tmp_path / "held.wav")}).encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    try:
        writers = []
        for sent in (body, b"{", b"{", b"{"):  # the oldest is whole; then three bodies still coming
            reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
            writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + sent)
            writers.append((reader, writer))
            await until(lambda: len(listener.guard.open) == len(writers) and not listener.guard.waiting)
        answer = await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))
        assert answer.startswith(b"HTTP/1.1 200"), answer
        async with asyncio.timeout(seconds(10)):
            assert await writers[1][0].read() == b""  # the longest arriving body: closed, no answer
        assert closed_by_guard(listener, "slow_body") == listener.guard.slow_bodies == 1
        assert [reader.at_eof() for reader, _ in writers] == [False, True, False, False]
    finally:
        engine.gate.set()
        for _, writer in writers:
            writer.close()


async def hold_a_request(socket_: aiohttp.ClientWebSocketResponse, text: str) -> None:
    """Start a preview on `socket_` and wait for its `start` (the engine's gate holds its audio)."""
    await socket_.send_json({"type": "synth", "text": text})
    async with asyncio.timeout(seconds(10)):
        while (await socket_.receive_json())["event"] != "start":
            pass


@contextlib.asynccontextmanager
async def open_sockets(served, count: int) -> AsyncIterator[tuple[Any, Callable[[], Any], list[Any]]]:
    """A worker capped at `count` connections with `count` idle /ws sockets open on it; its engine holds
    every request (`hold_a_request`) until the test ends. Yields (listener, connect another, sockets)."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    listener = await served(engine=engine, max_connections=count)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/ws"

            def connect() -> Any:
                return session.ws_connect(url)

            yield listener, connect, [await connect() for _ in range(count)]
    finally:
        engine.gate.set()


async def test_over_the_cap_the_longest_idle_websocket_is_closed_and_health_answers(served):
    async with open_sockets(served, 4) as (listener, connect, sockets):
        await hold_a_request(sockets[1], "held on the engine")  # in use: never the one closed
        for expected_closed in (0, 2):  # the longest idle first
            if expected_closed == 2:  # the room socket 0 left is taken again
                sockets.append(await connect())
            answer = await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))
            assert answer.startswith(b"HTTP/1.1 200")
            async with asyncio.timeout(seconds(10)):
                closing = await sockets[expected_closed].receive()
            assert closing.type == aiohttp.WSMsgType.CLOSE
            assert closing.data == aiohttp.WSCloseCode.TRY_AGAIN_LATER
            assert closing.extra == "idle connection closed to admit another"
        assert listener.guard.reclaimed == 2
        async with asyncio.timeout(seconds(5)):  # sockets 1, 3 and 4 (the health checks have ended)
            while len(listener.guard.open) != 3:
                await asyncio.sleep(0.01)
        assert not any(sockets[number].closed for number in (1, 3, 4))


def closed_by_guard(listener, reason: str) -> float:
    """What /metrics says about the guard's closes (read from the registry: the socket may be full)."""
    registry = listener.runner.app[METRICS_KEY].registry
    return registry.get_sample_value("npu_worker_connections_closed_total", {"reason": reason}) or 0.0


async def test_when_every_connection_is_in_use_a_new_one_is_refused(served, caplog):
    async with open_sockets(served, 2) as (listener, _, sockets):
        for number, socket_ in enumerate(sockets):
            await hold_a_request(socket_, f"held {number}")
        assert await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10)) == b""
        assert listener.guard.reclaimed == 0 and not any(s.closed for s in sockets)
        assert closed_by_guard(listener, "refused") == 1
        assert "all 2 connections are in use" in caplog.text  # the operator sees callers shut out


async def receive_type(socket_: aiohttp.ClientWebSocketResponse, kind: str) -> None:
    async with asyncio.timeout(seconds(10)):
        while True:
            message = await socket_.receive()
            if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data)["type"] == kind:
                return
            assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message


async def assert_reclaimed(listener, socket_: aiohttp.ClientWebSocketResponse) -> None:
    """A health check gets in, and `socket_` is the one closed with 1013 to make room."""
    assert (await raw_exchange(listener.port, HEALTH_REQUEST, seconds(10))).startswith(b"HTTP/1.1 200")
    async with asyncio.timeout(seconds(10)):
        while (closing := await socket_.receive()).type != aiohttp.WSMsgType.CLOSE:
            pass
    assert (closing.data, closing.extra) == (
        aiohttp.WSCloseCode.TRY_AGAIN_LATER,
        "idle connection closed to admit another",
    )


async def test_an_idle_speech_stream_socket_makes_room_but_one_mid_utterance_does_not(served):
    """`/v1/audio/speech/stream`: a socket between utterances is idle like an idle /ws socket; one with
    a fragment waiting for the rest of its sentence (an LLM pausing) or a sentence still to send is not."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    listener = await served(engine=engine, max_connections=3)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{listener.port}/v1/audio/speech/stream"
            pausing, idle, speaking = [await session.ws_connect(url) for _ in range(3)]
            await pausing.send_json({"type": "input.text", "text": "half a sente"})
            await speaking.send_json({"type": "input.text", "text": "Held on the engine."})
            await speaking.send_json({"type": "input.done"})
            await receive_type(speaking, "audio.start")  # its sentence runs, held by the gate
            await assert_reclaimed(listener, idle)
            engine.gate.set()
            await receive_type(speaking, "session.done")  # spoken: idle now
            newer = await session.ws_connect(url)  # the cap reached again, by a socket idle for less time
            await assert_reclaimed(listener, speaking)
            assert listener.guard.reclaimed == 2 and not pausing.closed and not newer.closed
            await pausing.send_json({"type": "input.done"})
            await receive_type(pausing, "session.done")  # the paused utterance is still there
    finally:
        engine.gate.set()


@pytest.mark.allow_blocking
def test_health_answers_while_trickling_sockets_outnumber_the_fd_limit(tmp_path: Path):
    """The issue's lockout, scaled down: ulimit -n 128 and 150 sockets sending a header byte now and then."""
    process = start_worker_process(
        tmp_path / "state", 0, delay=0.0, extra=["--nofile", "128", "--max-connections", "64"]
    )
    port = process.port
    socks: list[socket.socket] = []
    try:
        for _ in range(150):
            sock = socket.create_connection(("127.0.0.1", port), timeout=seconds(5))
            sock.sendall(b"GET / HTTP/1.1\r\n")
            socks.append(sock)
        for sock in socks:
            try:
                sock.sendall(b"X")
            except OSError:
                pass  # evicted: what the cap is for
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=seconds(10)) as response:
            assert json.loads(response.read())["loaded"] is True
        assert time.monotonic() - started < seconds(5)
    finally:
        for sock in socks:
            sock.close()
        process.terminate()
        process.wait(timeout=seconds(10))


def test_the_soft_open_file_limit_is_raised_to_what_max_connections_needs(caplog):
    import resource

    from npu_worker import server

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 64 + server.ACCEPT_BACKLOG + server.RESERVED_FILES
    if hard != resource.RLIM_INFINITY and hard < needed + 1:
        pytest.skip(f"the hard limit ({hard}) is too low to raise the soft one here")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed - 100, hard))
        server.fit_open_file_limit(64)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == needed
        server.fit_open_file_limit(10**9)  # more than the hard limit allows: said, not refused
        assert "--max-connections 1000000000 needs about" in caplog.text and "ulimit -n" in caplog.text
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_accept_failures_are_one_line_per_interval():
    from npu_worker.server import AcceptFailureThrottle

    throttle = AcceptFailureThrottle(interval=60.0)

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, None, None)

    failures = [record("socket.accept() out of system resource\nsocket: <...>") for _ in range(100)]
    passed = [r for r in failures if throttle.filter(r)]
    assert len(passed) == 1 and "no free file descriptor" in passed[0].getMessage()
    assert throttle.filter(record("something else from asyncio"))
