"""The player's rebuffer at its edges, in real headless Chromium against a real worker (tone engine).

- A stream at 48 kHz (a context rate where the 5 ms fade-out, 240 frames, is longer than one render
  quantum's 128): the rebuffer's fade-out was set into the quantum whole, a RangeError that stopped the
  worklet for good ("Playback stopped: the audio worklet failed"); now it plays over as many quanta as
  it takes, as a pause's does.
- A Cancel while the player waits (buffering…): nothing sounds then, but the cancel faded the queued
  audio out from full gain, a step from silence to the tone (a click); now the rebuffer's own fade-out
  is all that plays.
What the worklet sends to the speakers is recorded by test_player_played_pcm.py's tap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.player_support import snapshot, wait_for
from tests.test_player_rebuffer_fades import assert_no_click, open_recorded_page, recorded
from tests.test_ws_support import ChunkGate
from tests.tone_engine import ToneEngine


def held_engine(sample_rate: int) -> tuple[ToneEngine, ChunkGate]:
    """0.4 s of the text's 2.5 s, then the engine holds: the stream falls behind the playhead."""
    engine = ToneEngine(sample_rate=sample_rate, chunk_seconds=0.1)
    engine.gate = gate = ChunkGate()
    gate.allow(4)
    return engine, gate


def last_sound(played: np.ndarray) -> int:
    """Samples from the end of the last wait inside the sound (10 ms or more of exact silence) to the
    sound's last sample: the whole sound where it never waited."""
    sounding = np.flatnonzero(played)
    gaps = np.flatnonzero(np.diff(sounding) > 240)  # sounding[g] .. sounding[g + 1]: a wait
    start = sounding[gaps[-1] + 1] if gaps.size else sounding[0]
    return int(sounding[-1] - start + 1)


def test_a_48_khz_stream_rebuffers_without_stopping_the_worklet(open_player: Any) -> None:
    engine, gate = held_engine(48000)
    page, console = open_recorded_page(open_player, engine)
    try:
        page.click("#play")
        wait_for(page, "(s.figures.buffering === true && s.figures.playedFrames > 0) || s.message !== ''")
        assert snapshot(page)["message"] == ""  # (was: "Playback stopped: the audio worklet failed ...")
        gate.open()
        wait_for(page, "s.run.running === false && s.run.audioDrained === true")
    finally:
        gate.open()
    figures = snapshot(page)["figures"]
    assert figures["playedSourceSamples"] == figures["receivedSamples"] > 0
    assert_no_click(recorded(page))
    assert console.errors == []


def test_cancel_while_buffering_does_not_sound_the_queued_audio(open_player: Any) -> None:
    engine, gate = held_engine(24000)
    page, console = open_recorded_page(open_player, engine)
    try:
        page.click("#play")
        wait_for(page, "s.figures.buffering === true && s.figures.playedFrames > 0")
        page.click("#cancel")
    finally:
        gate.open()  # (the engine's next chunk lets the worker stop; the page drops the audio after Cancel)
    wait_for(page, "s.run.running === false && s.figures.buffering === false")
    # The tap records a 4 096-frame buffer at a time, behind the output: wait until it holds what the
    # context played after the cancel (its fade, 5 ms), else the recording stops before it.
    after_cancel = snapshot(page)["figures"]["audioClockFrame"] + 2 * 4096
    page.wait_for_function(f"() => window.playedChunks.reduce((n, c) => n + c.length, 0) >= {after_cancel}")
    played = recorded(page)
    # The sound ended with the rebuffer's fade-out; before, the cancel then faded what was queued in from
    # the tone's gain after the silence (a click, up to the tone's amplitude by its phase): a last sound
    # as short as a fade, 5 ms.
    assert last_sound(played) > 0.005 * 24000, "the cancel sounded queued audio after the wait"
    assert console.errors == []
