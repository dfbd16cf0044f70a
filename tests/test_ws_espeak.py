"""/ws previews with the real espeak-ng engine, which runs on the engine thread itself (`stream_into`:
no hand-off per chunk, later audio gathered) or in a child process per lane (`--espeak-process`): the
frames still follow the schedule and add up to the section, a cancel stops espeak mid-sentence, and the
library serves the next request after it."""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import time

import numpy as np
import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.audio import audible_onset
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.engine.espeak_process import ChildEspeak
from tests.test_ws_support import batch, connect, receive_until_done, run_request

where = pytest.mark.parametrize("espeak_process", [False, True], ids=["in-process", "child-process"])

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."
LONG_TEXT = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. " * 40  # about two minutes of speech


def samples_of(text: str) -> int:
    """How long espeak's audio for `text` is, made in this process."""
    engine = EspeakEngine()
    engine.load()
    made: list[int] = []
    engine.stream_into(SynthesisRequest(text), lambda chunk: made.append(chunk.size) is None)
    return sum(made)


@where
async def test_an_espeak_preview_streams_the_schedule_and_the_whole_section(worker, espeak_process):
    client = await worker(engine=None, backend="espeak", espeak_process=espeak_process)
    assert isinstance(client.app[SCHEDULER_KEY].engine.library, ChildEspeak) is espeak_process
    ws = await connect(client)
    transcript = await run_request(ws, batch(SENTENCE))
    sizes = [len(frame) // 2 for frame in transcript.section_frames(0)]
    assert sizes[:4] == [960, 1920, 3840, 7680]  # 40, 80, 160, 320 ms at 24 kHz
    assert all(size == 7680 for size in sizes[4:-1]) and 0 < sizes[-1] <= 7680
    [end] = transcript.events("audio_end")
    assert end["samples"] == sum(sizes) and end["chunks"] == len(sizes)
    audio = transcript.section_audio(0)
    assert 1.5 < audio.size / 24000 < 8.0
    assert audible_onset(audio, 24000) is not None
    [first] = transcript.events("first_audio")
    assert first["idx"] == 0 and first["ttfa_ms"] >= 0
    [ok] = [e for e in transcript.events("progress") if e["status"] == "ok"]
    assert abs(ok["duration_sec"] - audio.size / 24000) < 0.002  # every trimmed sample was sent
    await ws.close()


@where
async def test_a_cancel_stops_espeak_mid_sentence_and_the_next_request_speaks(worker, espeak_process):
    client = await worker(engine=None, backend="espeak", espeak_process=espeak_process)
    assert isinstance(client.app[SCHEDULER_KEY].engine.library, ChildEspeak) is espeak_process
    scheduler = client.app[SCHEDULER_KEY]
    ws = await connect(client)
    await ws.send_json(batch(LONG_TEXT))
    while not isinstance(await ws.receive(), bytes):
        pass
    await ws.send_json({"type": "cancel"})
    transcript = await receive_until_done(ws)
    assert transcript.done["cancelled"] is True and transcript.done["ok_count"] == 0
    [end] = transcript.events("audio_end")
    whole = await asyncio.to_thread(samples_of, LONG_TEXT)
    assert end["samples"] < 0.9 * whole  # espeak was stopped before the end of the text
    again = await run_request(ws, batch(SENTENCE))
    assert again.done["ok_count"] == 1
    assert audible_onset(again.section_audio(0), 24000) is not None
    assert scheduler.queue_size() == 0
    await ws.close()


@where
async def test_two_sockets_previewing_at_once_each_get_their_own_sentence(worker, espeak_process):
    client = await worker(engine=None, backend="espeak", espeak_process=espeak_process)
    assert isinstance(client.app[SCHEDULER_KEY].engine.library, ChildEspeak) is espeak_process
    first, second = await connect(client), await connect(client, "websockets")
    await first.send_json(batch(SENTENCE))
    await second.send_json(batch("안녕하세요. 반갑습니다."))
    one, two = await receive_until_done(first), await receive_until_done(second)
    assert one.done["ok_count"] == two.done["ok_count"] == 1
    long_audio, short_audio = one.section_audio(0), two.section_audio(0)
    assert long_audio.size > short_audio.size  # no chunk of one went to the other
    assert np.abs(long_audio).max() > 0.05 and np.abs(short_audio).max() > 0.05
    await first.close()
    await second.close()


async def test_a_child_that_crashes_mid_preview_fails_that_section_and_the_next_preview_speaks(worker):
    """With `--espeak-process` a crash inside espeak-ng (it parses every caller's text) ends a child
    process, not the worker: the section in flight gets an EngineError, and another child speaks next.
    Three long sections: a warm child makes one in ≈ 0.4 s of CPU, so under load the crash could come
    after a lone section was whole; whichever the crash meets fails, and the others are spoken."""
    client = await worker(engine=None, backend="espeak", espeak_process=True, preview_lanes=1)
    engine = client.app[SCHEDULER_KEY].engine
    crashed = engine.child.pid
    ws = await connect(client)
    await ws.send_json(batch(LONG_TEXT, LONG_TEXT, LONG_TEXT))
    while not isinstance(await ws.receive(), bytes):
        pass
    os.kill(crashed, signal.SIGSEGV)
    transcript = await receive_until_done(ws)
    [error] = transcript.events("error")
    assert error["error"].startswith("UnparsableText: espeak-ng's process failed")
    assert transcript.done["ok_count"] == 2
    again = await run_request(ws, batch(SENTENCE))
    assert again.done["ok_count"] == 1 and audible_onset(again.section_audio(0), 24000) is not None
    assert engine.child.pid != crashed
    await ws.close()


async def test_previews_cancelled_at_their_first_frame_end_cancelled_on_the_same_child(worker):
    """A cancel at the first frame stops the espeak child from the loop (`interrupt`): each preview
    ends cancelled with a sliver of its text, the child is the same one (stopped, not replaced), and
    the next preview is whole. The ms from `cancel` to `done` (the lane free again) is printed, not
    asserted (`benchmarks/loop_cost.py --cancel-first` measures it against another commit)."""
    client = await worker(engine=None, backend="espeak", espeak_process=True)
    scheduler = client.app[SCHEDULER_KEY]
    child = scheduler.engine.child.pid
    ws = await connect(client)
    whole = await asyncio.to_thread(samples_of, LONG_TEXT)
    waits = []
    for _ in range(10):
        await ws.send_json(batch(LONG_TEXT))
        while not isinstance(await ws.receive(), bytes):
            pass
        await ws.send_json({"type": "cancel"})
        cancelled = time.perf_counter()
        transcript = await receive_until_done(ws)
        waits.append((time.perf_counter() - cancelled) * 1000)
        assert transcript.done["cancelled"] is True and transcript.done["ok_count"] == 0
        [end] = transcript.events("audio_end")
        assert end["samples"] < 0.1 * whole
    print(f"cancel → done: median {statistics.median(waits):.2f} ms, max {max(waits):.2f} ms")
    again = await run_request(ws, batch(SENTENCE))
    assert again.done["ok_count"] == 1 and audible_onset(again.section_audio(0), 24000) is not None
    assert scheduler.engine.child.pid == child and scheduler.queue_size() == 0
    await ws.close()
