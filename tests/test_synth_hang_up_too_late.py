"""A `/synth` whose caller ended its sending side (a FIN) just as its section was done, on a real socket
behind the connection guard: the hang-up's cancel was taken (the job's end was still to be logged), yet
the job ended ok and the caller, still reading, read the 200 with its file. The access log and
`/metrics` counted it 499; now 200, what the caller got. The engine thread is held in the journal's
observer at the section's `ok` until the cancel has been taken, so the race is made, not hoped for."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.protocol import Progress
from tests.test_metrics_hang_up import HEAD, scrape, synth_counts
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


class HeldAtOk:
    """The journal's observer, with its `event` held at a section's `ok` until `release` is set."""

    def __init__(self, observer: Any) -> None:
        self._observer = observer
        self.reached = threading.Event()
        self.release = threading.Event()
        self.job: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._observer, name)

    def event(self, job: Any, event: Any) -> None:
        self._observer.event(job, event)
        if isinstance(event, Progress) and event.status == "ok":
            self.job = job
            self.reached.set()
            self.release.wait(seconds(30))


async def test_a_synth_done_as_its_caller_half_closed_is_counted_200(served, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="aiohttp.access")
    listener = await served(ToneEngine())
    scheduler = listener.runner.app[SCHEDULER_KEY]
    journal = scheduler.journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    answer, _ = await synth_half_closed_at_ok(listener.port, held, tmp_path)
    assert b" 200 " in answer.split(b"\r\n", 1)[0] and b'"status":"ok"' in answer.replace(b" ", b""), answer
    counts: dict[str, float] = {}
    async with asyncio.timeout(seconds(20)):
        while not counts:
            counts.update(synth_counts(await scrape(listener.port)))
            await asyncio.sleep(0.05)
    assert counts == {"200": 1.0}, counts
    await until(lambda: any("/synth" in r.getMessage() for r in caplog.records), "the access line")
    (line,) = [r.getMessage() for r in caplog.records if "/synth" in r.getMessage()]
    assert '"POST /synth HTTP/1.1" 200 ' in line, line


async def synth_half_closed_at_ok(port: int, held: HeldAtOk, tmp_path: Any) -> tuple[bytes, Any]:
    """A `/synth` whose caller ends its sending side (a FIN) while its section's `ok` is held."""
    body = json.dumps({"text": "안녕하세요.", "output_path": str(tmp_path / "a.wav")}).encode()
    return await half_closed_at_ok(port, held, HEAD % len(body) + body)


async def half_closed_at_ok(port: int, held: HeldAtOk, request: bytes) -> tuple[bytes, Any]:
    """`request` sent, then the caller's FIN while its section's `ok` is held, the hang-up's cancel taken
    before the job's end is logged: the caller's whole answer and the job."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the section's ok"
        job = held.job
        writer.write_eof()  # the caller's FIN: a hang-up, its cancel taken while the job's end is unlogged
        await until(lambda: job.cancel_requested.requested, "the hang-up's cancel")
        held.release.set()
        async with asyncio.timeout(seconds(20)):
            answer = await reader.read()
    finally:
        held.release.set()
        writer.close()
    return answer, job


async def test_a_hang_up_too_late_to_stop_a_synth_is_not_logged_as_stopping_it(served, tmp_path, caplog):
    """Its section had ended ok as the hang-up's cancel came: the log said "its synthesis stops"."""
    caplog.set_level(logging.INFO, logger="npu_worker")
    listener = await served(ToneEngine())
    journal = listener.runner.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    _, job = await synth_half_closed_at_ok(listener.port, held, tmp_path)
    await until(lambda: job.done_event is not None, "the job's done")
    said = [m for m in caplog.messages if f"job {job.id}" in m and "hung up" in m]
    assert said and not any("its synthesis stops" in m for m in said), said
    assert any("too late to stop it" in m for m in said), said
