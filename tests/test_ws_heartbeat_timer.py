"""A `/ws` request's heartbeat is its connection's timer (`session.py`): it fires while the request
waits, and sends nothing once its pump has ended, whichever way it ended (its `done`, a cancel, the
socket closed); it lapses at its next firing, or with the socket: a timer left armed sent `heartbeat`
events on an idle connection for ever after the request."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.ws_server.session import WsSession
from tests.test_ws_support import ChunkGate, batch, connect, receive_until_done
from tests.timing import seconds
from tests.tone_engine import ToneEngine

INTERVAL = 0.05


async def a_waiting_request(worker):
    """A worker whose engine holds the request until `gate.open()`, and a socket that has had a heartbeat."""
    gate = ChunkGate()
    engine = ToneEngine()
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine, heartbeat_interval=INTERVAL)
    ws = await connect(client)
    await ws.send_json(batch("기다린다."))
    while not (isinstance(item := await ws.receive(), dict) and item["event"] == "heartbeat"):
        pass
    return client, ws, gate


def armed_heartbeats() -> list[asyncio.TimerHandle]:
    """The loop's timers still due to run a request's heartbeat (the test's loop is the server's)."""
    loop = asyncio.get_running_loop()
    return [
        handle
        for handle in loop._scheduled  # type: ignore[attr-defined]
        if not handle.cancelled() and getattr(handle._callback, "__func__", None) is WsSession._heartbeat_due
    ]


@pytest.mark.parametrize("end", ["done", "cancel"])
async def test_no_heartbeat_once_the_request_has_ended(worker, end):
    client, ws, gate = await a_waiting_request(worker)
    try:
        if end == "cancel":
            await ws.send_json({"type": "cancel"})
        gate.open()
        transcript = await receive_until_done(ws)
        assert transcript.done is not None
        with pytest.raises(TimeoutError):  # six intervals of an idle connection: no frame at all
            item = await asyncio.wait_for(ws.receive(), 6 * INTERVAL)
            pytest.fail(f"sent after the request ended: {item!r}")
        assert armed_heartbeats() == []
        await ws.close()
    finally:
        gate.open()


async def test_no_heartbeat_timer_is_left_once_the_socket_has_closed(worker):
    client, ws, gate = await a_waiting_request(worker)
    try:
        await ws.close()
        async with asyncio.timeout(seconds(10)):  # the request's pump ends with its socket
            while any(task.get_name().startswith("ws-job-") for task in asyncio.all_tasks()):
                await asyncio.sleep(0.01)
        assert armed_heartbeats() == []
    finally:
        gate.open()


@pytest.mark.parametrize("pause", [0.5, 1.5], ids=["timer-still-due", "timer-lapsed"])
async def test_the_next_request_on_a_connection_gets_heartbeats_from_its_own_start(worker, pause):
    """The connection's timer, re-armed by the first request's heartbeat, is either still due when the
    second request starts (half an interval after the first's `done`) or has lapsed, firing with no
    request running (one and a half): either way the second, waiting for the engine, gets heartbeats,
    none before its own interval (`elapsed_sec`, from its message's arrival)."""
    interval = 0.4
    gate = ChunkGate()
    engine = ToneEngine(chunk_seconds=10.0)  # (a request's audio is one chunk, one permit)
    engine.gate = gate  # type: ignore[assignment]
    client = await worker(engine, heartbeat_interval=interval)
    ws = await connect(client)
    try:
        await ws.send_json(batch("먼저."))
        while not (isinstance(item := await ws.receive(), dict) and item["event"] == "heartbeat"):
            pass  # the first request waits: its heartbeat re-arms the connection's timer
        gate.allow(1)
        assert (await receive_until_done(ws)).done["ok_count"] == 1
        with pytest.raises(TimeoutError):  # (reading: aiohttp's client answers pings only while it does)
            item = await asyncio.wait_for(ws.receive(), pause * interval)
            pytest.fail(f"sent between the requests: {item!r}")
        await ws.send_json(batch("다음."))
        heartbeats = []
        async with asyncio.timeout(seconds(10)):  # (aiohttp's own receive timeout restarts at each ping)
            while len(heartbeats) < 2:
                item = await ws.receive()
                assert isinstance(item, dict) and item["event"] != "audio_start"
                if item["event"] == "heartbeat":
                    heartbeats.append(item["elapsed_sec"])
        assert min(heartbeats) >= interval, f"a heartbeat before the request's own interval: {heartbeats}"
        gate.allow(1)
        assert (await receive_until_done(ws)).done["ok_count"] == 1
        await ws.close()
    finally:
        gate.open()
