"""The player pauses cleanly: running dry mid-request is a rebuffer, and Pause/Resume fade.

Before, a stream that fell behind the playhead played silence from mid-wave (a click), then each chunk as
it came (a garble of clicks and short gaps), and Pause suspended the context mid-wave (a click at the
speakers each Pause and Resume). Now the worklet fades out over 5 ms and waits, saying `buffering`, until
250 ms are queued (or the request's end), then fades in; Pause fades out before the context is suspended,
Resume fades in. What the worklet sends to the speakers is recorded by a ScriptProcessor tapped onto it
(test_player_played_pcm.py's), in real headless Chromium against a real worker with the tone engine.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from tests.player_support import snapshot, wait_for
from tests.test_player_cancel_fade import LARGEST_STEP
from tests.test_player_played_pcm import PLAYED, TAP
from tests.test_ws_support import ChunkGate
from tests.tone_engine import ToneEngine

TEXT = "가나다라 " * 25  # one section, 2.5 s of one tone: no section join's phase jump in the recording


def recorded(page: Any) -> np.ndarray:
    return np.frombuffer(base64.b64decode(page.evaluate(PLAYED)), dtype=np.float32)


def quiet_stretches(played: np.ndarray, at_least: int) -> list[tuple[int, int]]:
    """(start, length) of each run of exact silence of `at_least` samples, inside the sound."""
    loud = np.flatnonzero(np.abs(played) > 0.1)
    inside = played[loud[0] : loud[-1]]
    silent = np.concatenate([[False], inside == 0, [False]])
    edges = np.flatnonzero(np.diff(silent.astype(np.int8)))
    runs = [(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2], strict=True)]
    return [(loud[0] + a, n) for a, n in runs if n >= at_least]


def assert_no_click(played: np.ndarray) -> None:
    """No step larger than the tone's own, up to its last sample: the engine's tone itself ends
    mid-wave (as the request's audio does), which no player fade should change."""
    assert np.abs(played).max() > 0.25  # the tone was recorded
    steps = np.abs(np.diff(played[: np.flatnonzero(played)[-1] + 1]))
    assert steps.max() <= LARGEST_STEP, f"a step of {steps.max():.3f} at sample {steps.argmax()} (a click)"


def open_recorded_page(open_player: Any, engine: ToneEngine) -> Any:
    worker, page, console = open_player(engine, open_page=False)
    page.add_init_script(TAP)
    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", TEXT)
    wait_for(page, "s.sections.length === 1")
    return page, console


def test_a_stream_behind_the_playhead_waits_buffering_then_fades_back_in(open_player: Any) -> None:
    engine = ToneEngine(chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    gate.allow(4)  # 0.4 s of the 2.5 s, then the engine holds: the stream falls behind the playhead
    page, console = open_recorded_page(open_player, engine)
    try:
        page.click("#play")
        wait_for(page, "s.figures.buffering === true && s.figures.playedFrames > 0")
        page.wait_for_selector("#buffering", state="visible")  # the page says so (drawn every 0.1 s)
        held = snapshot(page)["figures"]["playedFrames"]
        assert held <= 0.4 * 24000  # (no sound made up meanwhile)
        gate.open()
        wait_for(page, "s.run.running === false && s.run.audioDrained === true")
    finally:
        gate.open()
    page.wait_for_selector("#buffering", state="hidden")
    figures = snapshot(page)["figures"]
    assert figures["buffering"] is False and figures["playedSourceSamples"] == figures["receivedSamples"] > 0
    played = recorded(page)
    assert_no_click(played)  # it went quiet by a fade, and came back by one
    assert quiet_stretches(played, 240), "no wait for the rebuffer inside the sound"
    assert console.errors == []


def test_pause_and_resume_fade_instead_of_stopping_mid_wave(open_player: Any) -> None:
    page, console = open_recorded_page(open_player, ToneEngine())
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 7200")  # 0.3 s sounded
    page.click("#pause")
    wait_for(page, "s.paused === true")
    page.click("#pause")  # Resume
    wait_for(page, "s.paused === false")
    wait_for(page, "s.run.running === false && s.run.audioDrained === true")
    played = recorded(page)
    assert_no_click(played)
    # The sound reached silence before the context stopped (before, the recording ran on unbroken: the
    # context froze mid-wave, and so did the recorder beside the worklet).
    assert quiet_stretches(played, 8), "the sound did not fade to silence at the Pause"
    figures = snapshot(page)["figures"]
    assert figures["playedSourceSamples"] == figures["receivedSamples"] > 0  # nothing lost to the fades
    assert console.errors == []
