"""A real `npu-worker serve --port 0` (espeak) stopped with SIGTERM while the page previews a lecture.

The page must say so in words (the rows: the worker's `QueueFull` shutdown words; the status: the worker
unreachable), play out the audio it already has, and come back to a Play button: no row or run left
"playing" for ever.

The stop lands while sections still wait, by state, not timing: each espeak child stops itself (SIGSTOP)
before any section after the lecture's first (`HOLD_LATER_SECTIONS`, a `sitecustomize` only the children
act on; their load's warm-up passes), so at most the first section is done when the SIGTERM comes, and the
one the engine thread holds is let go (SIGCONT) once the drain has begun. Unheld, espeak-ng made the 21
sections in ≈ 0.4 s: on a loaded box all were done before the SIGTERM landed, and the page played 184 s
of audio out in real time before the test failed (load 17).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.player_support import LECTURE, choose_sections
from tests.serve_process import ServeProcess
from tests.test_shutdown_stopped_espeak import espeak_children
from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = "window.npuPlayer.snapshot()"
DRAIN_BEGUN = "shutdown: no longer accepting connections"  # logged as the drain stops admission

# The children's `sitecustomize` (the worker reads the same PYTHONPATH, and does nothing with it): a
# request for a section after the lecture's first stops its child until the test continues it, every
# time. The children die with the worker (`PR_SET_PDEATHSIG`), stopped or not.
HOLD_LATER_SECTIONS = """import os, signal
with open("/proc/self/cmdline", "rb") as _line:
    _child = b"npu_worker.engine.espeak_child" in _line.read()
if _child:
    from npu_worker.engine import espeak_child as _module

    _synthesise = _module._Child._synthesise

    def _held(self, payload):
        if self.decoder.decode(payload).text.startswith(HELD):
            os.kill(os.getpid(), signal.SIGSTOP)
        return _synthesise(self, payload)

    _module._Child._synthesise = _held
"""


def hold_later_sections(site: Path) -> None:
    """`site/sitecustomize.py` holding each section after the lecture's first (by its first words)."""
    later = tuple(section["text"][:8] for section in json.loads(LECTURE.read_text())["sections"][1:])
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"HELD = {later!r}\n{HOLD_LATER_SECTIONS}")


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[ServeProcess]:
    hold_later_sections(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    env.pop("NPU_WORKER_TOKEN", None)
    # a section held again (the let-go came before the drain stopped admission) ends at the grace,
    # cancelled, and its child killed 2 s on: 7 s, not the default grace's 32
    arguments = ["--state-dir", str(tmp_path / "state"), "--output-roots", str(tmp_path)]
    arguments += ["--shutdown-grace", "5"]
    process = ServeProcess(arguments, env)
    try:
        yield process
    finally:
        process.terminate_and_log(seconds(30))


def let_children_go(worker: ServeProcess) -> None:
    """SIGCONT to each espeak child of the worker (a running one ignores it)."""
    for child in espeak_children(worker.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGCONT)


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
        page.wait_for_function(
            f"() => {{ const s = {SNAPSHOT}; return s.run && s.figures.receivedSamples > 0; }}", polling=5
        )
        worker.send_signal(signal.SIGTERM)
        worker.log_until(DRAIN_BEGUN, seconds(30))
        let_children_go(worker)  # the held section ends; the drain ends the queued ones with its words
        worker.log_at_exit(seconds(30))
        page.wait_for_function(f"() => {SNAPSHOT}.run.running === false")
        # Checked before the play-out: a hold that did not hold left the page minutes of audio to play
        made = page.evaluate(f"{SNAPSHOT}.sections.filter((s) => s.synthSec !== null).length")
        assert made <= 2, f"{made} sections made before the stop: the hold did not hold ({worker.log()})"
        # The page plays out what it already has in real time: the first section, perhaps the held one
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
