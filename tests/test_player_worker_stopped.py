"""A real `npu-worker serve --port 0` (espeak) stopped with SIGTERM while the page previews a lecture.

The page must say so in words (the rows: the worker's `QueueFull` shutdown words; the status: the worker
unreachable), play out the audio it already has, and come back to a Play button: no row or run left
"playing" for ever.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.player_support import LECTURE, choose_sections
from tests.serve_process import ServeProcess
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = "window.npuPlayer.snapshot()"


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[ServeProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NPU_WORKER_TOKEN", None)
    process = ServeProcess(["--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)], env)
    try:
        yield process
    finally:
        process.terminate_and_log(seconds(30))


def test_a_worker_stopped_mid_preview_is_said_in_words_and_nothing_stays_playing(
    browser: Any, worker: ServeProcess
) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(seconds(60) * 1000)
        page.goto(f"{worker.base}/")
        page.wait_for_function(f"() => {SNAPSHOT}.worker.state === 'ready'")
        choose_sections(page, LECTURE, "0-20", 21)
        page.click("#play")
        # Stopped as the first audio comes, not once it plays: espeak-ng makes the 21 sections in ≈ 0.4 s,
        # and on a loaded box the page's first played frame came after all of them, leaving no section for
        # the stop to refuse (21 done, a mid-suite run at load 15).
        page.wait_for_function(
            f"() => {{ const s = {SNAPSHOT}; return s.run && s.figures.receivedSamples > 0; }}", polling=5
        )
        worker.send_signal(signal.SIGTERM)
        worker.log_at_exit(seconds(30))
        page.wait_for_function(f"() => {SNAPSHOT}.run.running === false")
        # The page plays out what it already has in real time: 17-62 s of audio in runs here, as many
        # sections as espeak-ng finished before the stop landed, so the wait is that long and a minute more.
        buffered_ms = page.evaluate(f"{SNAPSHOT}.figures.bufferedMs")
        page.wait_for_function(f"() => {SNAPSHOT}.run.audioDrained", timeout=seconds(60) * 1000 + buffered_ms)
        state = page.evaluate(SNAPSHOT)
        rows = page.inner_text("#slides")
        status, message, play = (
            page.inner_text("#worker-status"),
            page.inner_text("#message"),
            page.is_enabled("#play"),
        )
    finally:
        context.close()

    states = [s["state"] for s in state["sections"]]
    assert "playing" not in states and "queued" not in states, states
    assert states.count("done") >= 1 and "failed" in states, states
    assert "the worker is shutting down" in rows
    assert "unreachable" in status and "not running" in message
    assert play  # Play is offered again: nothing left "playing"
