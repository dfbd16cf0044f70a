"""Cancel stops the sound without a click: the worklet fades the flushed audio out over 5 ms.

The output stepped from mid-wave to silence in one sample (a tone at 0.3 cut at a random phase: a step
of up to 0.3, an audible pop each Cancel). What the worklet sends to the speakers is recorded by a
ScriptProcessor tapped onto it (as in test_player_played_pcm.py), over three Play/Cancel rounds in real
headless Chromium against a real worker with the tone engine.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from tests.player_support import snapshot, wait_for
from tests.test_player_played_pcm import PLAYED, TAP
from tests.timing import seconds
from tests.tone_engine import ToneEngine

TEXT = "가나다라 " * 25  # one section, 2.5 s of one tone: no section join's phase jump in the recording
# The tone's own largest step between samples is 0.3·2π·f/24 000 ≤ 0.033 (f ≤ 420 Hz); a fade of
# 5 ms adds at most 0.3/120. A cut adds |0.3·sin φ|, over 0.06 for 87 % of phases: three rounds.
LARGEST_STEP = 0.06


def test_cancel_fades_the_sound_out_instead_of_cutting_it(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine(), open_page=False)
    page.add_init_script(TAP)
    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", TEXT)
    wait_for(page, "s.sections.length === 1")
    for round_ in range(3):
        page.click("#play")
        wait_for(page, f"s.run?.request === {round_ + 1} && s.figures.playedFrames > 7200")  # 0.3 s sounded
        page.click("#cancel")
        wait_for(page, "s.run.cancelled === true && s.figures.bufferedMs === 0")
        recorded = page.evaluate("window.playedChunks.length")
        # The recorder hands its 4096-frame buffers on a little late: two more hold the moment of the cancel.
        page.wait_for_function(
            f"() => window.playedChunks.length >= {recorded + 2}", timeout=seconds(10) * 1000
        )
    played = np.frombuffer(base64.b64decode(page.evaluate(PLAYED)), dtype=np.float32)
    assert np.abs(played).max() > 0.25  # the tone was recorded
    steps = np.abs(np.diff(played))
    assert steps.max() <= LARGEST_STEP, f"a step of {steps.max():.3f} at sample {steps.argmax()} (a click)"
    assert snapshot(page)["sections"][0]["state"] == "cancelled"
    assert console.errors == []
