"""What a worker keeps per request must not grow with the number of requests (it runs for weeks)."""

from __future__ import annotations

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.scheduler import LANGS_KEPT


async def test_each_spelling_of_a_language_is_not_remembered_forever(worker, tmp_path):
    """`lang` is any string up to 32 characters and espeak-ng takes "ko-<anything>" as Korean: the
    scheduler's set of checked languages grew by one entry per spelling a caller sent."""
    client = await worker(None)  # the real espeak-ng engine, as `serve` runs it
    scheduler = client.app[SCHEDULER_KEY]
    for i in range(LANGS_KEPT * 3):
        body = {"text": "가.", "lang": f"ko-x{i}", "output_path": str(tmp_path / "out.wav")}
        async with client.post("/synth", json=body) as response:
            assert response.status == 200 and (await response.json())["status"] == "ok"
    assert len(scheduler._checked_langs) <= LANGS_KEPT
