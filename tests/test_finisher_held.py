"""A batch section's end is handed to the finisher once the next section's request has reached espeak's
child, not before it: handed over at once, it woke the finisher, whose wav and events took the GIL while
the engine thread made the next request, the child idle between sections (benchmarks/SERVER_OVERHEAD.md,
2026-12-07, stop 61). The log, the files and a cancel's end read as before.

A real worker with a real espeak child; the engine thread's calls are recorded on their way through.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.jobs.finisher import Finisher
from tests.test_finisher import kinds, submit_batch
from tests.test_http_api import read_ndjson
from tests.test_preemption import PausableTone
from tests.test_ws_support import ChunkGate
from tests.timing import seconds, until

TEXTS = ["오늘은 음성 합성을 배웁니다.", "첫째, 문장을 읽습니다.", "둘째, 소리를 만듭니다.", "끝입니다."]


def record_engine_thread(monkeypatch: Any) -> list[str]:
    """`request` when the engine thread asks espeak for a section, `chunk` for each chunk back, and
    `handover` for each hand-over to the finisher, in the order they happen. The engine thread's only:
    a preview lane's load (its warm-up request, on a thread of its own) may come at any point."""
    order: list[str] = []
    stream_into = EspeakProcessEngine.stream_into
    submit = Finisher.submit

    def recorded_stream(engine: Any, request: Any, sink: Any, sent: Any = None) -> Any:
        if threading.current_thread().name != "npu-worker-engine":
            return stream_into(engine, request, sink, *(() if sent is None else (sent,)))
        order.append("request")

        def seen(chunk: Any) -> bool:
            order.append("chunk")
            return sink(chunk)

        return stream_into(engine, request, seen, *(() if sent is None else (sent,)))

    def recorded_submit(finisher: Any, work: Any, *args: Any) -> None:
        if threading.current_thread().name == "npu-worker-engine":
            order.append("handover")
        submit(finisher, work, *args)

    monkeypatch.setattr(EspeakProcessEngine, "stream_into", recorded_stream)
    monkeypatch.setattr(Finisher, "submit", recorded_submit)
    return order


async def test_a_section_is_handed_over_after_the_next_request_reaches_espeak(worker, monkeypatch, tmp_path):
    order = record_engine_thread(monkeypatch)
    client = await worker(EspeakProcessEngine())
    order.clear()  # (the load's warm-up request)
    sections = [
        {"idx": i, "text": t, "output_path": str(tmp_path / f"s{i}.wav")} for i, t in enumerate(TEXTS)
    ]
    events = await read_ndjson(await client.post("/synth_batch", json={"sections": sections}))
    assert kinds(events) == [
        ("start", None, None),
        *[(e, i, s) for i in range(len(TEXTS)) for e, s in (("progress", "synth"), ("progress", "ok"))],
        ("done", None, None),
    ]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all((tmp_path / f"s{i}.wav").stat().st_size > 44 for i in range(len(TEXTS)))
    requests = [i for i, what in enumerate(order) if what == "request"]
    assert len(requests) == len(TEXTS)
    # nothing handed over between a section's last chunk and the next section's request
    assert [order[i - 1] for i in requests[1:]] == ["chunk"] * (len(TEXTS) - 1), order
    assert "handover" in order[requests[-1] :]  # the last section's end, and the job's, still handed over


async def test_a_cancelled_batch_ends_once_with_what_was_held(worker, monkeypatch, tmp_path):
    client = await worker(EspeakProcessEngine())
    many = [
        {"idx": i, "text": TEXTS[i % len(TEXTS)], "output_path": str(tmp_path / f"c{i}.wav")}
        for i in range(40)
    ]
    job_id = await submit_batch(client, {"sections": many})
    events = await client.get(f"/jobs/{job_id}/events")
    seen: list[dict[str, Any]] = []
    async for line in events.content:  # cancel at its first `ok`: the next section runs, one is held
        seen.append(json.loads(line))
        if seen[-1].get("status") == "ok":
            assert (await client.delete(f"/jobs/{job_id}")).status == 200
            break
    events.close()
    replay = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert [e["event"] for e in replay].count("done") == 1
    assert replay[-1]["event"] == "done" and replay[-1]["cancelled"] is True
    oks = [e["idx"] for e in replay if e.get("status") == "ok"]
    assert oks == list(range(len(oks))) and all((tmp_path / f"c{i}.wav").exists() for i in oks)


async def test_a_synth_inside_a_paused_batch_section_is_answered_before_that_section_ends(worker, tmp_path):
    """ZipVoice pauses a batch section for a `/synth` (`preemptible`): the engine thread ends the
    `/synth`'s section, then resumes the batch's. Held for the batch's next request, its `ok` and `done`
    (the answer) waited for the rest of the batch section: seconds on ZipVoice."""
    engine = PausableTone(chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    client = await worker(engine)
    long_text = "가" * 100  # 20 chunks, each let through by the gate; the batch has a section after it
    batch = [
        {"idx": 0, "text": long_text, "output_path": str(tmp_path / "s0.wav")},
        {"idx": 1, "text": "다", "output_path": str(tmp_path / "s1.wav")},
    ]
    try:
        assert (await client.post("/synth_batch?async=1", json={"sections": batch})).status == 200
        gate.allow(2)
        await until(lambda: gate.passed >= 2, "the batch section under way")
        preview = asyncio.create_task(
            client.post("/synth", json={"text": "나" * 10, "output_path": str(tmp_path / "p.wav")})
        )
        admission = client.app[SCHEDULER_KEY].admission
        await until(lambda: len(admission.live_jobs()) == 2, "the /synth queued")
        gate.allow(3)  # the /synth's 2 chunks, inside the batch section by its 3rd chunk at the latest
        async with asyncio.timeout(seconds(20)):
            answer = await (await preview).json()
        assert answer["status"] == "ok", answer
        assert engine.made.count(long_text) < 20  # the batch section still waits at the gate
    finally:
        gate.open()


async def test_a_preview_lane_leaves_what_the_engine_thread_holds_to_it(worker, tmp_path):
    """What the engine thread holds goes once its own request is sent: a lane's section released it
    (its `sent` and its release before a call), from another thread, the finisher woken in the engine
    thread's gap as before the hold. The engine thread's request waits on its child's pipe meanwhile."""
    client = await worker(EspeakProcessEngine())
    scheduler = client.app[SCHEDULER_KEY]
    admission, runner = scheduler.admission, scheduler.runner
    await until(lambda: admission._lanes_waiting == 1, "the preview lane loaded and waiting")
    writing = runner.engine.child._writing  # the engine thread's next request to its child waits on it
    writing.acquire()
    try:
        batch = [
            {"idx": i, "text": t, "output_path": str(tmp_path / f"s{i}.wav")} for i, t in enumerate(TEXTS)
        ]
        job_id = await submit_batch(client, {"sections": batch})
        await until(lambda: runner.finisher.holding, "the batch's first `synth` held, its request waiting")
        synth = {"text": "미리 듣기입니다.", "output_path": str(tmp_path / "p.wav")}
        answer = await (await client.post("/synth", json=synth)).json()  # made on the lane
        assert answer["status"] == "ok", answer
        assert runner.finisher.holding  # still the engine thread's
    finally:
        writing.release()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert [e["event"] for e in events][-1] == "done"
    assert [e["idx"] for e in events if e.get("status") == "ok"] == list(range(len(TEXTS)))
