"""The shutdown's end of a `/ws` request whose last section had ended ok as it came (its `done` still to
be logged): its cancel stopped nothing, the job ends whole (`done`, `cancelled: false`) and its audio all
goes out, yet the socket sent the shutdown's `error` (QueueFull: shutting down) before that `done`, as if
the request had been cut. Now the `error` goes out only with a `done` that says the job was cut. The
engine thread is held at the section's `ok` (tests/test_synth_hang_up_too_late.HeldAtOk) until the
shutdown's cancel is taken; `close_sockets` is the shutdown's own step for the sockets."""

from __future__ import annotations

import asyncio

import aiohttp

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.ws_server.routes import close_sockets
from tests.test_synth_hang_up_too_late import HeldAtOk
from tests.test_ws_support import batch, connect
from tests.timing import seconds, until


async def test_a_ws_request_the_shutdown_ends_too_late_to_stop_is_told_no_error(worker):
    client = await worker()
    journal = client.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    ws = (await connect(client)).ws  # (aiohttp's client socket: the close code is read)
    events, closing = [], None
    try:
        await ws.send_json(batch("안녕하세요."))
        assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the section's ok"
        job = held.job
        closing = asyncio.create_task(close_sockets(client.app))
        await until(lambda: job.cancel_requested.requested, "the shutdown's cancel")
        held.release.set()
        while (message := await ws.receive(timeout=seconds(20))).type in (
            aiohttp.WSMsgType.TEXT,
            aiohttp.WSMsgType.BINARY,
        ):
            if message.type == aiohttp.WSMsgType.TEXT:
                events.append(message.json())
        assert (message.type, message.data) == (aiohttp.WSMsgType.CLOSE, 1001), message
    finally:
        held.release.set()
        if closing is not None:
            await closing
        await ws.close()
    (done,) = [e for e in events if e["event"] == "done"]
    assert done["cancelled"] is False and done["ok_count"] == 1, done
    assert not [e for e in events if e["event"] == "error"], events
