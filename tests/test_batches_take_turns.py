"""Two batches share the engine as docs/protocol.md says (walk33: a lecture pipeline's second lecture
sent while the first ran): the new batch's first section goes next, then the jobs take turns, a section
each; neither waits for the other to end."""

from __future__ import annotations

import json
import threading

from tests.timing import until
from tests.tone_engine import ToneEngine


async def events_until_done(client, job_id: str) -> list[dict]:
    response = await client.get(f"/jobs/{job_id}/events?after=0")
    assert response.status == 200
    return [json.loads(line) async for line in response.content]


async def test_a_second_batch_starts_after_the_running_section_and_the_two_take_turns(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()  # the first section holds the engine until both batches wait
    client = await worker(engine=engine)
    jobs = []
    for name in ("a", "b"):
        body = {"sections": [{"idx": i, "text": f"{name}{i} 하나"} for i in range(4)], "lang": "ko"}
        response = await client.post("/synth_batch?async=1", json=body)
        assert response.status == 200, await response.text()
        jobs.append((await response.json())["job_id"])
        if name == "a":
            await until(lambda: engine.calls, "the first batch's first section under way")
    engine.gate.set()
    for job_id in jobs:
        assert (await events_until_done(client, job_id))[-1]["event"] == "done"
    made = [text.split()[0] for text in engine.calls]
    assert made == ["a0", "b0", "a1", "b1", "a2", "b2", "a3", "b3"]
