"""A listened section that is also written to a file (a `/ws` section with `output_path`) on espeak's child:
the lane holds its wake-ups of the event loop to the section's end (`LoopHandoff.hold`), but not across
the disk work there. What it handed over last goes to the loop before its wav is written, and its `ok`
and `done` reach the caller before the synthesis cache writes (and syncs) its copy, as before the hold:
held across them, they waited for that disk work, and so did any other thread's hand-over queued
behind them (a batch's `ok` from the finisher: its NDJSON line waited for another section's write).
Real worker, real espeak child, real files; the writes are only waited in on their way through, until
what must come before them has come (bounded: the wait fails the test).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.jobs.cache import SynthesisCache
from npu_worker.paths import PathPolicy
from tests.test_ws_support import Transcript, connect, run_request
from tests.timing import seconds

TEXT = "오늘은 음성 합성을 배웁니다."


def section(output_path: Path | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"idx": 0, "text": TEXT}
    if output_path is not None:
        body["output_path"] = str(output_path)
    return {"type": "synth_batch", "sections": [body]}


async def test_a_listened_sections_disk_work_does_not_hold_what_the_caller_waits_for(
    worker, tmp_path, monkeypatch
):
    done_heard, kept = threading.Event(), threading.Event()
    before_write: list[bool] = []  # each write: another thread's hand-over meanwhile reached the loop
    before_keep: list[bool] = []  # each cache write: its `done` had reached the caller
    write_output, put = PathPolicy.write_output, SynthesisCache.put

    def write_after_a_hand_over(self: PathPolicy, path: str, wav: bytes) -> None:
        ran = threading.Event()  # (a finisher's `ok` of a batch section, as it were)
        other = threading.Thread(target=lambda: handoff(lambda _: ran.set(), None))
        other.start()
        before_write.append(ran.wait(seconds(10)))
        other.join()
        write_output(self, path, wav)

    def keep_after_the_done(self: SynthesisCache, key: str, wav: bytes) -> None:
        before_keep.append(done_heard.wait(seconds(10)))
        put(self, key, wav)
        kept.set()

    client = await worker(EspeakProcessEngine(), cache_max_bytes=16 * 1024 * 1024)
    handoff = client.app[SCHEDULER_KEY].journal.handoff
    ws = await connect(client)
    try:
        heard = await run_request(ws, section())  # listened only: no file, nothing cached
        assert heard.section_pcm(0) and heard.events("error") == []
        monkeypatch.setattr(PathPolicy, "write_output", write_after_a_hand_over)
        monkeypatch.setattr(SynthesisCache, "put", keep_after_the_done)
        await ws.send_json(section(tmp_path / "a.wav"))
        transcript = Transcript()
        while not done_heard.is_set():
            item = await ws.receive()
            transcript.items.append(item)
            if isinstance(item, dict) and item["event"] == "done":
                done_heard.set()
    finally:
        done_heard.set()
        await ws.close()
    assert transcript.done["ok_count"] == 1 and transcript.events("error") == []
    assert transcript.section_pcm(0) == heard.section_pcm(0)  # (the same frames every time: espeak's child)
    assert (tmp_path / "a.wav").stat().st_size > 44
    assert await asyncio.to_thread(kept.wait, seconds(20))  # (the cache's write comes after the `done`)
    # [False]: the lane's held hand-overs, and the other thread's behind them, waited for its wav's write;
    # its `ok` and `done`, for the cache's
    assert (before_write, before_keep) == ([True], [True])
