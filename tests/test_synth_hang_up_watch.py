"""A `/synth`'s caller's hang-up, told by its connection (issue 25, stop 61): no timer a call on the loop
(real worker behind `listen`, real sockets)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
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


async def test_a_synth_whose_caller_hangs_up_mid_synthesis_is_cancelled_at_once(served, tmp_path):
    """Told by the connection's end, not found at a look: the job is cancelled and nothing written."""
    engine = ToneEngine(delay_per_chunk=0.05)  # 2 000 characters: 400 chunks, 20 s
    listener = await served(engine=engine)
    scheduler = listener.runner.app[SCHEDULER_KEY]
    body = json.dumps({"text": "가" * 2000, "output_path": str(tmp_path / "never.wav")}).encode()
    head = b"POST /synth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    _, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    await until(lambda: engine.calls, "the synthesis to start")
    writer.close()
    async with asyncio.timeout(seconds(10)):
        while scheduler.jobs_running() or scheduler.queue_size():
            await asyncio.sleep(0.05)
    assert not (tmp_path / "never.wav").exists()
