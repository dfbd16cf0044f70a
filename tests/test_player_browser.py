"""The browser preview player (client_js/) in headless Chromium against a real worker: playback.

A lecture's sections play to *done* at the stream's rate; Pause holds the sound, Cancel stops it (mid-run
or during the play-out), a stream at another rate is not played. Shared helpers: tests/player_support.py.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.player_support import (
    COMMITTED_SCREENSHOT,
    SCREENSHOT,
    assert_silent_for_a_while,
    choose_sections,
    shown_number,
    snapshot,
    wait_for,
    wait_until,
)
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_five_lecture_sections_play_gaplessly_to_done(open_player: Any, lecture: Path) -> None:
    # A little slower than instant (5x real time), as a real engine: sound must start before it is all made.
    worker, page, console = open_player(ToneEngine(delay_per_chunk=0.02))
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-4", 5)

    page.click("#play")
    wait_for(page, "s.sections.every((x) => x.state === 'done') && s.run.audioDrained", timeout=60)

    state = snapshot(page)
    figures, run = state["figures"], state["run"]
    assert [s["idx"] for s in state["sections"]] == [0, 1, 2, 3, 4]
    assert all(s["synthSec"] is not None and s["synthSec"] >= 0 for s in state["sections"])
    assert run["receivedSamples"] > 0
    assert run["receivedSamples"] == run["announcedSamples"]  # every audio_end.samples arrived as PCM
    made = sum(round(s["durationSec"] * run["streamRate"]) for s in state["sections"])
    assert abs(run["receivedSamples"] - made) <= 5 * 12  # all the audio the engine made (ms rounding)
    assert figures["playedSourceSamples"] >= run["receivedSamples"]
    # The context runs at the worker's rate (the browser converts to the device's): every sample is a frame.
    assert figures["contextRate"] == run["streamRate"] == 24000
    assert figures["playedFrames"] >= run["receivedSamples"]  # nothing dropped
    assert figures["ttfaMs"] > 0
    assert shown_number(page, "#ttfa") > 0
    assert shown_number(page, "#underruns") == figures["underruns"] >= 0
    assert state["message"] == ""  # no problem reported by the page, its socket worker or its worklet
    assert figures["longestTaskMs"] >= 0  # measured (reported in the summary line), not bounded here
    assert console.errors == []

    wait_for(page, "s.worker.jobsRunning === 0")
    page.locator("details.log-panel").evaluate("(el) => { el.open = false; }")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    if os.environ.get("NPU_WORKER_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(SCREENSHOT, COMMITTED_SCREENSHOT)


def test_a_context_at_the_stream_rate_plays_the_samples_as_they_came(open_player: Any, lecture: Path) -> None:
    worker, page, console = open_player(ToneEngine(delay_per_chunk=0.02), open_page=False)
    page.goto(worker.url + "?rate=24000")
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0", 1)

    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done' && s.run.audioDrained")
    state = snapshot(page)
    assert state["figures"]["contextRate"] == state["run"]["streamRate"] == 24000
    assert state["figures"]["playedFrames"] == state["run"]["receivedSamples"] > 0
    assert "resampled" not in page.inner_text("#rates")
    assert console.errors == []


def test_a_stream_at_another_rate_is_not_played_and_the_next_play_uses_its_rate(
    open_player: Any, lecture: Path
) -> None:
    worker, page, console = open_player(ToneEngine(sample_rate=22050), open_page=False)
    page.goto(worker.url + "?rate=24000")  # a context at 24 kHz for a 22.05 kHz stream
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0", 1)

    page.click("#play")
    wait_for(page, "s.message.includes('now streams 22050 Hz audio and the player ran at 24000 Hz')")
    assert snapshot(page)["figures"]["playedFrames"] == 0  # nothing played at the wrong pitch
    wait_until(lambda: worker.health()[1]["jobs_running"] == 0, "the mismatched request was not cancelled")
    time.sleep(0.3)  # the answer to the player's own cancel (NotRunning when the tone had finished)...
    assert "now streams 22050 Hz" in snapshot(page)["message"]  # ...does not replace the explanation

    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done' && s.run.audioDrained")
    state = snapshot(page)
    assert state["figures"]["contextRate"] == state["run"]["streamRate"] == 22050
    assert state["figures"]["playedFrames"] == state["run"]["receivedSamples"] > 0
    assert console.errors == []


def test_cancel_mid_run_stops_playback_and_the_server_request(open_player: Any, lecture: Path) -> None:
    # Synthesis slower than real time: the request is surely still running when Cancel is pressed.
    engine = ToneEngine(delay_per_chunk=0.2)
    worker, page, console = open_player(engine)
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-4", 5)

    page.click("#play")
    wait_for(
        page, "s.sections[0].state === 'playing' && s.figures.playedFrames > 0.2 * s.figures.contextRate"
    )
    assert worker.health()[1]["jobs_running"] == 1
    page.click("#cancel")

    wait_for(page, "s.run.running === false && s.run.cancelled === true")  # the server's done(cancelled)
    wait_for(page, "s.figures.bufferedMs === 0")
    state = assert_silent_for_a_while(page)
    assert all(s["state"] in ("done", "cancelled") for s in state["sections"])
    assert state["sections"][-1]["state"] == "cancelled"
    assert "Cancelled" in page.inner_text("#message")

    wait_until(lambda: worker.health()[1]["jobs_running"] == 0, "the worker still counts the request")
    assert len(engine.calls) < 5  # the later sections never reached the engine
    assert console.errors == []


def test_pause_holds_the_sound_while_synthesis_goes_on_and_resume_plays_the_rest(
    open_player: Any, lecture: Path
) -> None:
    worker, page, console = open_player(ToneEngine(delay_per_chunk=0.02))
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-2", 3)

    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 0.2 * s.figures.contextRate")
    page.click("#pause")
    wait_for(page, "s.paused")
    paused_at = snapshot(page)["figures"]["contextTime"]
    wait_for(page, "s.run.running === false")  # the worker finished while the sound was held
    # The Buffer figure shows what came meanwhile (it stood at its value from before the pause).
    wait_for(page, "Math.round(s.figures.bufferedMs * 24) === s.run.receivedSamples - s.figures.playedFrames")
    state = snapshot(page)
    assert state["figures"]["contextTime"] == paused_at  # the audio clock stood still
    assert any(s["state"] != "done" for s in state["sections"])
    assert page.inner_text("#pause") == "▶ Resume"

    page.click("#pause")
    wait_for(page, "s.sections.every((x) => x.state === 'done') && s.run.audioDrained")
    state = snapshot(page)
    assert state["figures"]["playedSourceSamples"] == state["run"]["receivedSamples"]
    assert console.errors == []


def test_a_rate_mismatch_cancels_every_unfinished_section_and_the_run(
    open_player: Any, lecture: Path
) -> None:
    worker, page, console = open_player(ToneEngine(delay_per_chunk=0.05), open_page=False)
    page.goto(worker.url + "?rate=48000")  # a 48 kHz context for the 24 kHz stream
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-2", 3)

    page.click("#play")
    wait_for(page, "s.message.includes('now streams 24000 Hz audio and the player ran at 48000 Hz')")
    wait_for(page, "s.run.running === false")
    state = snapshot(page)
    # The page closed the socket, so the worker's done(cancelled) never comes: the page settles it all.
    assert [s["state"] for s in state["sections"]] == ["cancelled"] * 3
    assert state["run"]["cancelled"] is True
    assert state["figures"]["summary"].startswith(
        "Cancelled: 0 of 3 played, 0 failed, 3 cancelled; 0 synthesised"
    )
    details = page.locator("#slides .detail").all_inner_texts()
    assert not any(detail.endswith("…") for detail in details), details  # no synthesis timer runs on
    assert not page.is_enabled("#cancel")
    wait_until(lambda: worker.health()[1]["jobs_running"] == 0, "the mismatched request was not cancelled")
    assert console.errors == []


def test_cancel_during_play_out_stops_playback_and_asks_the_worker_nothing(
    open_player: Any, lecture: Path
) -> None:
    worker, page, console = open_player(ToneEngine())  # instant: synthesis ends long before the sound
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-2", 3)

    page.click("#play")
    wait_for(page, "s.run && s.run.running === false && !s.run.audioDrained && s.figures.playedFrames > 0")
    page.click("#cancel")
    wait_for(page, "s.run.cancelled === true && s.figures.bufferedMs === 0")
    state = assert_silent_for_a_while(page)
    # No cancel went to the worker: it would have answered NotRunning ("Nothing to cancel").
    assert "Nothing to cancel" not in state["message"]
    assert "playback stopped (the worker had already finished synthesising)" in state["message"]
    assert all(s["state"] in ("done", "cancelled") for s in state["sections"])
    assert state["sections"][-1]["state"] == "cancelled"
    played = sum(s["state"] == "done" for s in state["sections"])  # the summary adds up to the rows
    summary = f"Cancelled: {played} of 3 played, 0 failed, {3 - played} cancelled; 3 synthesised"
    assert state["figures"]["summary"].startswith(summary), state["figures"]["summary"]
    assert not page.is_enabled("#cancel") and page.is_enabled("#play")
    assert console.errors == []


def test_the_slide_list_follows_an_edited_text_and_redraws_only_rows_that_changed(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine(seconds_per_char=0.002))
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", "가.")
    page.fill("#input", "나.")  # the same idx, another text: the row showed "가." while "나." was sent
    assert page.inner_text("#slides .text") == "나."

    rows = 100
    page.fill("#input", "\n\n".join(f"{i}." for i in range(rows)))
    wait_for(page, f"s.sections.length === {rows}")
    page.evaluate(
        """() => { window.rowWrites = 0;
        new MutationObserver((records) => { window.rowWrites += records.length; })
          .observe(document.getElementById('slides'), {subtree: true, childList: true, attributes: true}); }"""
    )
    page.click("#play")
    wait_for(page, "s.sections.every((x) => x.state === 'done') && s.run.audioDrained", timeout=60)
    # Each row changes state a few times (~6 writes each); every event rewrote all rows: ~600 x 100 x 6.
    writes = page.evaluate("window.rowWrites")
    assert writes < 60 * rows, writes
    assert console.errors == []


def test_text_that_starts_with_a_bracket_is_text_not_broken_json(open_player: Any) -> None:
    """Lecture scripts often begin with a slide mark: "[슬라이드 1] …" was taken for JSON that does not
    parse, so the page showed an error, listed no slide and left Play disabled."""
    engine = ToneEngine()
    worker, page, console = open_player(engine)
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", "[슬라이드 1] 안녕하세요.\n\n{인사} 반갑습니다.")
    wait_for(page, "s.sections.length === 2")
    assert page.inner_text("#slides").count("슬라이드 1") == 1 and snapshot(page)["message"] == ""
    page.click("#play")
    wait_for(page, "s.sections.every((x) => x.state === 'done') && s.run.audioDrained")
    assert len(engine.calls) == 2 and "안녕하세요" in engine.calls[0] and "반갑습니다" in engine.calls[1]
    page.fill("#input", '{"sections": [{"idx": 0, "text": "가."}')  # JSON, unfinished: still an error
    wait_for(page, "s.message.includes('does not parse')")
    assert console.errors == []


def test_cancel_while_paused_leaves_no_resume_label_and_the_next_play_sounds(
    open_player: Any, lecture: Path
) -> None:
    worker, page, console = open_player(ToneEngine())  # instant: the audio plays out after synthesis
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-3", 4)  # 5 s of sound: still playing at the pause
    page.click("#play")
    wait_for(page, "s.figures.playedFrames > 0 && s.run.running === false")
    page.click("#pause")
    wait_for(page, "s.paused")
    page.click("#cancel")
    wait_for(page, "s.run.cancelled === true")
    # The disabled Pause button read "▶ Resume": there is nothing to resume.
    assert page.inner_text("#pause") == "Pause" and not page.is_enabled("#pause")
    page.click("#play")  # the held context plays again
    wait_for(page, "s.run.ttfaMs !== null && !s.paused")  # the new request's first audible sample played
    assert console.errors == []


def test_an_overflow_reported_after_done_stops_the_play_out(open_player: Any, lecture: Path) -> None:
    """The worklet's `overflow` (over 30 minutes queued) and the worker's `done` travel on two paths (the
    audio thread's port, the socket worker's): when `done` came first, the page only cancelled a running
    request, so it said "Cancelled" while the half hour played on. The report is delivered here in that
    order (the same module instance the page runs)."""
    worker, page, console = open_player(ToneEngine())  # instant: done comes long before the sound ends
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-2", 3)
    page.click("#play")
    wait_for(page, "s.run && s.run.running === false && !s.run.audioDrained && s.figures.playedFrames > 0")
    page.evaluate(
        """async () => {
            const { onPlayerReport } = await import("./events.js");
            const request = window.npuPlayer.snapshot().run.request;
            onPlayerReport({ type: "overflow", request, seconds: 1800 });
        }"""
    )
    wait_for(page, "s.run.cancelled === true && s.figures.bufferedMs === 0")
    state = assert_silent_for_a_while(page)
    assert "over 30 minutes of audio came ahead of playback" in state["message"]
    assert not page.is_enabled("#cancel") and page.is_enabled("#play")
    assert console.errors == []


def test_a_speed_changed_while_playing_says_it_applies_to_the_next_play(
    open_player: Any, lecture: Path
) -> None:
    engine = ToneEngine()  # instant: the request has finished and its audio plays out
    worker, page, console = open_player(engine)
    wait_for(page, "s.worker.state === 'ready'")
    choose_sections(page, lecture, "0-3", 4)  # 5 s of sound: still playing at the change
    page.click("#play")
    wait_for(page, "s.run && s.figures.playedFrames > 0 && !s.run.audioDrained")
    page.locator("#speed").fill("1.5")
    # It read "1.50×" while the request played at 1.00×.
    assert page.inner_text("#speed-value") == "1.50× from the next Play (this one: 1.00×)"
    page.click("#cancel")  # the play-out stops: nothing plays at another speed than the one shown
    assert page.inner_text("#speed-value") == "1.50×"
    page.click("#play")
    wait_for(page, "s.run.running === false && s.run.okCount === 4")
    assert [request.speed_factor for request in engine.requests] == [1.0] * 4 + [1.5] * 4
    assert console.errors == []
