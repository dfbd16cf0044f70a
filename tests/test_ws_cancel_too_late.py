"""A `/ws` `cancel` taken as the request's last section ended ok (its `done` still to be logged): the
socket drops the audio it had not sent yet, so the caller is answered `done` with `cancelled: true`, as
PROTOCOL §6 says of a `cancel`, while the job itself, whose engine was done, is counted ok. Since
`jobs/ending.end_job` ends such a job ok, the socket forwarded its `done` as it was, `cancelled: false`,
to a caller whose cancel was taken and whose audio it had cut. The engine thread is held at the
section's `ok` (tests/test_synth_hang_up_too_late.HeldAtOk) until the cancel is taken."""

from __future__ import annotations

import asyncio

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_job_cancel_too_late import job_outcomes
from tests.test_metrics_hang_up import scrape
from tests.test_synth_hang_up_too_late import HeldAtOk
from tests.test_ws_support import batch, connect, receive_until_done
from tests.timing import seconds, until


async def test_a_ws_cancel_taken_as_the_last_section_ended_ok_is_answered_cancelled(worker):
    client = await worker()
    journal = client.app[SCHEDULER_KEY].journal
    assert journal is not None
    held = journal.observer = HeldAtOk(journal.observer)
    ws = await connect(client)
    try:
        await ws.send_json(batch("안녕하세요."))
        assert await asyncio.to_thread(held.reached.wait, seconds(20)), "the section's ok"
        job = held.job
        await ws.send_json({"type": "cancel"})  # taken while the job's end is unlogged
        await until(lambda: job.cancel_requested.requested, "the cancel")
        held.release.set()
        transcript = await receive_until_done(ws)
    finally:
        held.release.set()
        await ws.close()
    assert transcript.done["cancelled"] is True, transcript.done
    await until(lambda: job.done_event is not None, "the job's done")
    assert job.done_event.cancelled is False  # the job's own end: its engine stopped nothing
    assert job_outcomes(await scrape(client.port)) == {("preview", "ok"): 1.0}
