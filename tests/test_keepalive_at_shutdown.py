"""A request on a kept-alive connection during the shutdown's drain: aiohttp's `pre_shutdown` closed
the idle connection (`RequestHandler.close`, which drops every byte that arrives after it, the
transport left open), so a caller reusing its pooled connection waited out the whole drain (up to
`--shutdown-grace`) and then saw the connection cut, a POST never told whether it ran. The connection
now reads on: the request gets the shutdown's 429 `QueueFull` at once, as protocol.md says."""

from __future__ import annotations

import asyncio

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_ws_shutdown import gated_worker
from tests.timing import seconds, until

SHUTTING_DOWN = "the worker is shutting down; send the request again once it is back"


async def test_a_request_on_a_kept_alive_connection_during_the_drain_is_told_queue_full(settings):
    async with (
        gated_worker(settings) as worker,
        aiohttp.ClientSession() as busy_http,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as http,
    ):
        health = await http.get(worker.url("/health"))  # the one pooled connection, kept alive
        assert health.status == 200 and not health.headers.get("Connection", "").lower() == "close"
        await health.read()
        busy = await busy_http.ws_connect(worker.url("/ws"), autoclose=False)
        await busy.send_json({"type": "synth", "text": "가" * 5})
        await until(lambda: worker.engine.calls, "the engine to take the section")
        speech_url = worker.url("/v1/audio/speech")  # (the listener's port is gone once it closes)
        scheduler = worker.listener.runner.app[SCHEDULER_KEY]
        worker.closing = asyncio.create_task(worker.listener.close())  # SIGTERM's: the drain begins
        await until(lambda: scheduler.draining, "the drain to begin")
        # The section is held at the gate: the drain lasts until the gate opens, so an answer within
        # this bound is one given during the drain (before: none until then, then a cut connection).
        async with asyncio.timeout(seconds(5)):
            speech = await http.post(speech_url, json={"input": "나", "response_format": "wav"})
            body = await speech.json()
        assert (speech.status, speech.headers.get("Retry-After")) == (429, "5"), body
        assert (body["error"]["code"], body["error"]["message"]) == ("QueueFull", SHUTTING_DOWN)
        worker.gate.open()
        while (await busy.receive(timeout=seconds(10))).type != aiohttp.WSMsgType.CLOSE:
            pass
        await busy.close()
    assert worker.engine.calls == ["가" * 5]
