"""Pause and Resume pressed in quick succession, in real headless Chromium against a real worker with the
tone engine: a Resume within the pause's 5 ms fade dropped the rest of that fade (its frames lost, the
sound stepping from mid-fade to the fade-in's silence: a click), and a second Pause while the first
waited for its fade took the one waiter, so the first waited out the 250 ms fallback.

The page's 250 ms fallback timers are stretched to 60 s here, so a Pause that waits on one is seen as
one that never ends (in 10 s), not measured against the clock."""

from __future__ import annotations

from typing import Any

from tests.player_support import wait_for
from tests.test_player_played_pcm import TAP
from tests.test_player_rebuffer_fades import assert_no_click, open_recorded_page, recorded
from tests.tone_engine import ToneEngine

NO_FALLBACK = """
const setTimeoutBefore = window.setTimeout;
window.setTimeout = (callback, delay, ...rest) => setTimeoutBefore(callback, delay === 250 ? 60000 : delay, ...rest);
"""
PLAYER = (
    "(await import(new URL('./state.js', document.querySelector('script[type=module]').src))).state.player"
)


def playing_page(open_player: Any) -> Any:
    worker, page, console = open_player(ToneEngine(), open_page=False)
    page.add_init_script(NO_FALLBACK)
    page.add_init_script(TAP)
    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", "가나다라 " * 25)
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 7200")  # 0.3 s sounded
    return page, console


def ended_in_time(page: Any, pauses: str) -> str:
    """'quiet' when every Pause of `pauses` (JS, `player` in scope, an array of promises) ended within
    10 s, else 'fallback' (one waits on a stretched fallback timer)."""
    return page.evaluate(
        f"""async () => {{
          const player = {PLAYER};
          const all = Promise.all({pauses}).then(() => "quiet");
          return Promise.race([all, new Promise((r) => setTimeout(r, 10000, "fallback"))]);
        }}"""
    )


def test_a_resume_within_the_pause_fade_plays_the_rest_of_it(open_player: Any) -> None:
    page, console = open_recorded_page(open_player, ToneEngine())
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 7200")
    for played_before in (9600, 14400, 19200):  # three rounds: each at its own phase of the tone
        wait_for(page, f"s.figures.playedFrames > {played_before}")
        page.evaluate(f"async () => {{ const player = {PLAYER}; player.pause(); await player.resume(); }}")
    wait_for(page, "s.run.running === false && s.run.audioDrained === true")
    assert_no_click(recorded(page))
    assert console.errors == []


def test_two_pauses_at_once_both_end_at_the_fade(open_player: Any) -> None:
    page, console = playing_page(open_player)
    assert ended_in_time(page, "[player.pause(), player.pause()]") == "quiet"
    wait_for(page, "s.paused === true")
    assert console.errors == []


def test_a_pause_resume_pause_ends_at_the_second_fade(open_player: Any) -> None:
    page, console = playing_page(open_player)
    assert ended_in_time(page, "[player.pause(), player.resume(), player.pause()]") == "quiet"
    wait_for(page, "s.paused === true")
    assert console.errors == []
