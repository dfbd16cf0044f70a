"""Play while a request is paused: it resumed that request, whatever the box had chosen since.

A lecturer previewing slides pauses on slide 0, picks slide 2 in *Sections* and presses ▶ Play: the
button was enabled and resumed slide 0 (the old request), and slide 2 was never sent. Play is now
disabled while a request runs or plays out, paused or not: Resume plays on, Cancel then Play starts the
slides chosen (real worker with the tone engine, real headless Chromium).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.player_support import choose_sections, snapshot, wait_for
from tests.tone_engine import ToneEngine


def test_play_while_paused_never_resumes_the_old_slides(open_player: Any, lecture: Path) -> None:
    engine = ToneEngine()
    worker, page, console = open_player(engine)  # instant: the audio plays out after synthesis
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-1", 2)
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 0")
    page.click("#pause")
    wait_for(page, "s.paused")
    page.fill("#range", "2")  # another slide, chosen while paused
    # Play would resume slides 0-1: it is not offered; Resume is.
    assert not page.is_enabled("#play")
    assert page.inner_text("#pause") == "▶ Resume" and page.is_enabled("#pause")
    page.click("#pause")
    wait_for(page, "!s.paused")
    page.click("#cancel")
    wait_for(page, "s.run.cancelled === true && !s.run.running")
    page.fill("#range", "2")  # the box's choice is read again once the request is over
    wait_for(page, "s.sections.length === 1 && s.sections[0].idx === 2")
    assert page.is_enabled("#play")
    page.click("#play")
    wait_for(page, "s.run.request === 2 && s.run.ttfaMs !== null")
    assert [x["idx"] for x in snapshot(page)["sections"]] == [2]
    assert len(engine.calls) == 3  # slides 0 and 1, then slide 2 alone
    assert console.errors == []
