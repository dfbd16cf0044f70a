"""A `/synth`'s caller's hang-up, told by its connection (issue 25, stop 61): no timer a call on the loop
(real worker behind `listen`, real sockets)."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections import Counter
from typing import Any

import aiohttp
import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.http_compat import hang_up, routes
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def test_a_synth_served_by_listen_arms_no_timer_to_look_for_its_caller(served, tmp_path):
    """The handler looked at its caller on a timer a wait (an `asyncio.timeout` of 0.2 s, armed and
    cancelled each call: its `Timeout`, its `TimerHandle`, the heap's comparisons); the connection
    tells it now, so a call arms only its body's deadline."""
    listener = await served()
    loop = asyncio.get_running_loop()
    armed: Counter[str] = Counter()
    call_at = loop.call_at

    def counted(when: float, callback: Any, *arguments: Any, **keywords: Any) -> Any:
        armed[getattr(callback, "__qualname__", type(callback).__qualname__)] += 1
        return call_at(when, callback, *arguments, **keywords)

    url = f"http://127.0.0.1:{listener.port}/synth"
    async with aiohttp.ClientSession() as session:
        body = {"text": "한 번에.", "output_path": str(tmp_path / "warm.wav")}
        assert (await (await session.post(url, json=body)).json())["status"] == "ok"
        loop.call_at = counted  # type: ignore[method-assign]
        try:
            for call in range(3):
                body = {"text": f"한 번에 {call}.", "output_path": str(tmp_path / f"{call}.wav")}
                answer = await (await session.post(url, json=body)).json()
                assert answer["status"] == "ok" and (tmp_path / f"{call}.wav").stat().st_size > 44
        finally:
            del loop.call_at
    assert armed["HangUpWatch._look"] == 0, armed
    assert armed["Timeout._on_timeout"] <= 3, armed  # (the body's deadline, one a call)


@pytest.fixture
def no_timed_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 0.2 s look stretched to an hour: a hang-up is then seen only where the connection tells it,
    so a test of that telling fails where the hang-up is found by a look (as it was, `asyncio.timeout`)."""
    monkeypatch.setattr(hang_up, "HANG_UP_CHECK_SECONDS", 3600.0)
    monkeypatch.setattr(routes, "HANG_UP_CHECK_SECONDS", 3600.0, raising=False)  # (where it was read)


def synth_request(text: str, path: Any) -> bytes:
    body = json.dumps({"text": text, "output_path": str(path)}).encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


async def synth_under_way(
    served: Any, tmp_path: Any, *, answered_first: bool = False
) -> tuple[Any, Any, asyncio.StreamReader, asyncio.StreamWriter]:
    """A long `/synth` sent whole over a raw socket, its synthesis started: (engine, scheduler, reader,
    writer). `answered_first`: after a short `/synth` on the same kept-alive connection, answered whole."""
    engine = ToneEngine(delay_per_chunk=0.05)  # 2 000 characters: 400 chunks, 20 s
    listener = await served(engine=engine)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    if answered_first:
        writer.write(synth_request("한 번에.", tmp_path / "first.wav"))
        async with asyncio.timeout(seconds(10)):
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            assert b'"status":"ok"' in (await reader.readexactly(length)).replace(b" ", b""), head
    writer.write(synth_request("가" * 2000, tmp_path / "never.wav"))
    await writer.drain()
    await until(lambda: len(engine.calls) > answered_first, "the synthesis to start")
    return engine, scheduler, reader, writer


@pytest.mark.parametrize("answered_first", [False, True], ids=["first-request", "after-an-answered-synth"])
async def test_a_synth_whose_caller_resets_mid_synthesis_is_cancelled_at_once(
    served, tmp_path, no_timed_look, answered_first
):
    """Told by the connection's loss (`connection_lost`: a reset, no FIN first), not found at a look: the
    job is cancelled and nothing written; also for a kept-alive connection's second `/synth` (each
    request's watch is told, the first one's ended with its answer)."""
    _, scheduler, _, writer = await synth_under_way(served, tmp_path, answered_first=answered_first)
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()  # (a close with SO_LINGER 0: an RST)
    await until(lambda: not (scheduler.jobs_running() or scheduler.queue_size()), "the job's end")
    assert not (tmp_path / "never.wav").exists()


async def test_a_synth_whose_caller_ends_its_sending_side_is_answered_cancelled_at_once(
    served, tmp_path, no_timed_look
):
    """Told by the caller's FIN (`eof_received`, after a whole request): the caller, still reading, is
    answered `Cancelled` at once (docs/protocol.md), and nothing is written."""
    _, _, reader, writer = await synth_under_way(served, tmp_path)
    writer.write_eof()
    async with asyncio.timeout(seconds(10)):
        answer = await reader.read()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 200") and b'"error": "Cancelled: ' in answer, answer
    assert not (tmp_path / "never.wav").exists()
