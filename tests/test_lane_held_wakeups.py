"""An engine lane holds its wake-ups of the event loop from one read of espeak's pipe to the next, and past
the last to its section's end (`LoopHandoff.hold`): the frames the child wrote together, a preview's `ok`
and `done` behind its last ones, reach the loop in one drain, with no later-audio window for its timer
to drain (issue 25, benchmarks/SERVER_OVERHEAD.md, 2026-12-07, stop 62). Real loops, threads, a real
worker and a real espeak child; the handoff's methods are only counted on their way through.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_frame_reader import FrameReader
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.jobs.loop_handoff import LoopHandoff
from npu_worker.paths import PathPolicy
from tests.test_loop_handoff import CountedWakes, in_thread
from tests.test_ws_support import Transcript, batch, connect, receive_until_done, run_request
from tests.timing import seconds, until

TEXTS = ["오늘은 음성 합성을 배웁니다.", "첫째, 문장을 읽습니다.", "둘째, 소리를 만듭니다.", "끝입니다."]


async def test_a_holding_thread_wakes_the_loop_once_at_its_release_with_everything_in_order():
    handoff = CountedWakes(asyncio.get_running_loop())
    ran: list[int] = []
    held = threading.Event()
    go_on = threading.Event()

    def lane() -> None:
        handoff.hold()
        handoff(ran.append, 1)  # a read's urgent chunks,
        handoff.then_later(ran.append, 2, within=0.001)  # its last urgent one,
        handoff.later(ran.append, 3, within=0.001)  # the chunks past it,
        handoff.soon(ran.append, 4)  # the section's `ok`
        handoff.soon(ran.append, 5, last=True)  # and `done`
        held.set()
        go_on.wait(seconds(10))
        handoff.release()

    running = asyncio.ensure_future(in_thread(lane))
    await asyncio.to_thread(held.wait, seconds(10))
    await asyncio.sleep(0.05)  # (the loop turns meanwhile: a window of 1 ms would have been drained)
    await in_thread(lambda: handoff(ran.append, 6))  # another thread's call behind the held ones
    assert ran == [] and handoff.wakes == []  # nothing woke the loop: all wait for the release
    go_on.set()
    await running
    await until(lambda: len(ran) == 6, "the held calls run")
    assert ran == [1, 2, 3, 4, 5, 6]
    assert handoff.wakes == ["_drain"]  # one wake-up for them all, no window's `_arm_woken`
    assert handoff._timer is None  # and no window's timer armed


async def test_a_flush_wakes_the_loop_for_what_was_held_and_the_hold_goes_on():
    handoff = CountedWakes(asyncio.get_running_loop())
    ran: list[int] = []
    # Every step of the lane on one thread, its own: a hold is its thread's. The loop's default executor
    # (`in_thread`) started a second thread when a step came before the first thread had marked itself
    # idle, and the step ran there unheld (≈ 1 run in 100 on a busy 2-core VM).
    lane_thread = ThreadPoolExecutor(max_workers=1)

    async def on_lane(step: Callable[[], object]) -> object:
        return await asyncio.get_running_loop().run_in_executor(lane_thread, step)

    def lane() -> list[int]:
        handoff.hold()
        handoff.flush_held()  # nothing held: no wake-up
        handoff(ran.append, 1)
        handoff.flush_held()  # (the lane is about to wait on the pipe)
        return list(ran)

    try:
        await on_lane(lane)
        await until(lambda: ran == [1], "the flushed call runs")
        await on_lane(lambda: handoff(ran.append, 2))  # the same thread, still holding
        await asyncio.sleep(0.05)
        assert ran == [1] and handoff.wakes == ["_drain"]
        await on_lane(handoff.release)
        await until(lambda: ran == [1, 2], "the released call runs")
        assert handoff.wakes == ["_drain", "_drain"]
        await on_lane(lambda: handoff(ran.append, 3))  # released: a call wakes the loop as ever
        await until(lambda: ran == [1, 2, 3], "an ordinary call runs")
        await on_lane(handoff.release)  # (released twice: nothing)
        assert handoff.wakes == ["_drain", "_drain", "_drain"]
    finally:
        lane_thread.shutdown()


async def test_a_holding_lane_that_yields_to_the_loop_has_its_first_audio_taken_not_its_timeout_waited():
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []

    def lane() -> list[int]:
        handoff.hold()
        handoff(ran.append, 1)  # a preview's first audio,
        handoff.yield_to_loop(seconds(30))  # waited on: held, the loop would never come to take it
        seen = list(ran)
        handoff.release()
        return seen

    async with asyncio.timeout(seconds(10)):
        assert await in_thread(lane) == [1]


async def test_a_yield_after_a_drain_that_ran_what_was_held_is_not_held_itself():
    """Another lane's wake-up drained the held first audio just before the yield: the yield's own release
    of the lane, queued then, is flushed too (flushed before it was queued, it was held, and the lane
    waited its whole timeout)."""
    handoff = LoopHandoff(asyncio.get_running_loop())
    ran: list[int] = []
    queued, drained = threading.Event(), threading.Event()

    def lane() -> list[int]:
        handoff.hold()
        handoff(ran.append, 1)
        queued.set()
        drained.wait(seconds(10))
        handoff.yield_to_loop(seconds(30))
        handoff.release()
        return list(ran)

    running = asyncio.ensure_future(in_thread(lane))
    await asyncio.to_thread(queued.wait, seconds(10))
    handoff._drain()  # (as another lane's wake-up would run it, on the loop)
    drained.set()
    async with asyncio.timeout(seconds(10)):
        assert await running == [1]


async def test_a_drain_meanwhile_leaves_no_wake_up_owed():
    """A drain woken by another thread runs what a holding thread queued: its release wakes nobody."""
    handoff = CountedWakes(asyncio.get_running_loop())
    ran: list[int] = []
    held, drained = threading.Event(), threading.Event()

    def lane() -> None:
        handoff.hold()
        handoff(ran.append, 1)
        held.set()
        drained.wait(seconds(10))
        handoff.release()

    running = asyncio.ensure_future(in_thread(lane))
    await asyncio.to_thread(held.wait, seconds(10))
    await in_thread(lambda: handoff.with_next(ran.append, 2))
    handoff._drain()  # (as another lane's wake-up would run it, on the loop)
    drained.set()
    await running
    assert ran == [1, 2] and handoff.wakes == []


def test_the_child_s_reader_tells_each_wait_and_forgets_the_teller_after_the_request():
    engine = EspeakProcessEngine()
    engine.load()
    try:
        waits: list[int] = []
        chunks: list[int] = []

        def waiting() -> None:
            waits.append(len(chunks))

        def sink(chunk: Any) -> bool:
            chunks.append(chunk.size)
            return True

        engine.stream_into(SynthesisRequest(TEXTS[0]), sink, waiting=waiting)
        assert waits and waits[0] == 0  # told before its first read, then before each that waits
        assert waits == sorted(waits) and len(chunks) > len(waits) - 1
        assert engine.child._answers.before_wait is None
    finally:
        engine.close()


async def test_a_previews_read_reaches_the_loop_in_one_drain_with_no_window(worker, monkeypatch):
    """Previews over `/ws` on a real espeak child: no lane wakes the loop to arm a later-audio window and
    no window's timer drains one (before: ≈ 0.3–0.5 and 0.6–0.8 a preview); the lanes' wake-ups of the
    loop are at most one a read of the pipe, and one at the section's end, the first audio's aside."""
    counts = {"_arm_woken": 0, "_timer_drain": 0, "wakes": 0, "reads": 0}
    arm_woken, timer_drain, wake = LoopHandoff._arm_woken, LoopHandoff._timer_drain, LoopHandoff._wake
    read_wait = FrameReader._wait

    def counted(name: str, method: Any) -> Any:
        def run(self: Any, *arguments: Any) -> Any:
            counts[name] += 1
            return method(self, *arguments)

        return run

    def lane_wake(self: LoopHandoff, callback: Any, *arguments: Any) -> None:
        if threading.current_thread().name.startswith("npu-worker-engine"):
            counts["wakes"] += 1
        wake(self, callback, *arguments)

    monkeypatch.setattr(LoopHandoff, "_arm_woken", counted("_arm_woken", arm_woken))
    monkeypatch.setattr(LoopHandoff, "_timer_drain", counted("_timer_drain", timer_drain))
    monkeypatch.setattr(LoopHandoff, "_wake", lane_wake)
    monkeypatch.setattr(FrameReader, "_wait", counted("reads", read_wait))
    client = await worker(EspeakProcessEngine())
    ws = await connect(client)
    try:
        first = [await run_request(ws, batch(text)) for text in TEXTS]
        counts.update({"_arm_woken": 0, "_timer_drain": 0, "wakes": 0, "reads": 0})
        transcripts = [await run_request(ws, batch(text)) for text in TEXTS * 3]
    finally:
        await ws.close()
    for transcript, again in zip(transcripts, first * 3, strict=True):
        assert transcript.done["ok_count"] == 1 and transcript.events("error") == []
        assert transcript.section_pcm(0) == again.section_pcm(0)  # the same frames every time
    previews = len(transcripts)
    assert counts["_arm_woken"] == 0 and counts["_timer_drain"] == 0
    assert counts["wakes"] <= counts["reads"] + 2 * previews


async def test_a_previews_last_audio_is_not_held_behind_its_wav_s_write(worker, monkeypatch, tmp_path):
    """A `/ws` preview that writes its wav (`output_path`): its last chunks reach the caller while the
    wav is written, not after it (held to the section's end, they and every other thread's hand-over
    waited for the encode, the write and the cache's put: a slow disk's time). The write here waits
    until the caller has every frame the same text streams without a file but the last (the socket's
    re-cut keeps that one to the section's end), 10 s at most."""
    all_heard, write_waits = threading.Event(), []
    write_output = PathPolicy.write_output

    def write_once_heard(self: PathPolicy, path: str, data: bytes) -> None:
        write_waits.append(all_heard.wait(seconds(10)))
        write_output(self, path, data)

    monkeypatch.setattr(PathPolicy, "write_output", write_once_heard)
    client = await worker(EspeakProcessEngine())
    ws = await connect(client)
    try:
        alone = await run_request(ws, batch(TEXTS[0]))  # (no file: no write)
        before_the_end = len(alone.section_pcm(0)) - len(alone.section_frames(0)[-1])
        target = str(tmp_path / "s00.wav")
        await ws.send_json(batch(TEXTS[0], sections=[{"idx": 0, "text": TEXTS[0], "output_path": target}]))
        transcript, heard = Transcript(), 0
        while heard < before_the_end:  # (a socket's receive: no timer of ours to outrun)
            item = await ws.receive()
            transcript.items.append(item)
            heard += len(item) if isinstance(item, bytes) else 0
        all_heard.set()
        transcript = await receive_until_done(ws, transcript)
    finally:
        all_heard.set()
        await ws.close()
    assert write_waits == [True]  # the caller had the audio while the write waited
    assert transcript.done["ok_count"] == 1 and transcript.events("error") == []
    assert transcript.section_pcm(0) == alone.section_pcm(0)
    assert [e["wav_path"] for e in transcript.events("progress") if e["status"] == "ok"] == [target]
    assert os.path.getsize(target) > 44
