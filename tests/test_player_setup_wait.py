"""The Play click's wait before the send is said beside Time to first audio.

Time to first audio starts at the request's send; a first Play makes the AudioContext, loads its
worklet and opens the socket before that, tens to hundreds of ms the figure never showed. The caption
now says what the click waited, for a first Play and a warm one. Real worker (tone engine), real
headless Chromium.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.player_support import choose_sections, snapshot, wait_for
from tests.tone_engine import ToneEngine


def caption_wait(page: Any) -> int:
    caption = page.inner_text("#ttfa-detail")
    match = re.search(r"; the click waited (\d+) ms before the send$", caption)
    assert match, caption
    return int(match.group(1))


def test_the_caption_says_what_the_click_waited_before_the_send(open_player: Any, lecture: Path) -> None:
    worker, page, console = open_player(ToneEngine())
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0", 1)
    for request in (1, 2):  # a first Play (context, worklet and socket made), then a warm one
        page.click("#play")
        wait_for(page, f"s.run?.request === {request} && s.run.ttfaMs != null")
        shown = caption_wait(page)
        setup = snapshot(page)["run"]["setupMs"]
        assert setup >= 0 and abs(shown - setup) <= 1
        page.click("#cancel")
        wait_for(page, "!s.run.running && s.run.audioDrained")
    assert console.errors == []
