"""The player when the worker refuses a request or ends it with an error (headless Chromium; a real worker,
or a rogue one for what the real worker sends only when its engine or queue fails; helpers in
tests/player_support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.player_support import snapshot, wait_for
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_refused_request_is_said_to_be_refused_not_finished(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine())
    wait_for(page, "s.worker.state === 'ready'")
    # Two sections with the same idx (a hand-edited lecture): the worker refuses the whole request.
    page.fill("#input", '{"sections": [{"idx": 0, "text": "가."}, {"idx": 0, "text": "나."}]}')
    wait_for(page, "s.sections.length === 2")
    page.click("#play")
    wait_for(page, "s.run && s.run.running === false")
    state = snapshot(page)
    assert "DuplicateIndex" in state["message"]
    assert [s["state"] for s in state["sections"]] == ["idle", "idle"]  # never sent to the engine
    # It read "Finished: 0 ok, 0 failed": a run that never ran, summed up as one that did.
    assert state["figures"]["summary"].startswith("Not run: the worker refused the request (DuplicateIndex: ")
    wait_for(page, "document.getElementById('run-summary').textContent === s.figures.summary")  # as drawn
    assert page.is_enabled("#play") and not page.is_enabled("#cancel")
    assert console.errors == []
