"""`?worker=` naming a path of a real worker rather than the worker (its OpenAI base URL `…/v1/`, which an
SDK user has at hand, or a mistyped folder): the page asks `…/v1/health`, a 404. It showed the worker's
JSON cut at 80 characters ("error must be a string, not {"message":"no such endpoint: GET /v1/he"), or,
for a v1-shaped 404 (`"status": "fail"`), "the worker cannot take requests: BadRequest: no such endpoint …"
of a worker that could; now a sentence: the address asked, the worker's words, what `?worker=` takes
(headless Chromium; helpers in tests/player_support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.player_support import snapshot, wait_for
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ADVICE = (
    "?worker= takes the address the worker answers /health under (such as http://127.0.0.1:7768/, or the "
    "folder a proxy serves it from), not a path of its API such as /v1/"
)


@pytest.mark.parametrize(
    ("path", "words"),
    [
        # the OpenAI shape, {"error": {"message", "code"}}; v1's, {"status": "fail", "error": "…"}
        ("v1/", "BadRequest: no such endpoint: GET /v1/health"),
        ("tts/", "BadRequest: no such endpoint: GET /tts/health"),
    ],
)
def test_a_path_of_the_worker_as_worker_reads_as_a_sentence(open_player: Any, path: str, words: str) -> None:
    worker, page, console = open_player(ToneEngine(), open_page=False)
    asked = f"{worker.url}{path}health"
    page.goto(f"{worker.url}?worker={worker.url}{path}")
    wait_for(page, "s.worker.state === 'error'")
    state = snapshot(page)
    assert state["worker"]["message"] == f"GET {asked} answered 404: {words}: {ADVICE}"
    assert state["message"] == state["worker"]["message"]
    assert "{" not in state["message"] and "cannot take requests" not in state["message"]
    assert page.inner_text("#worker-status") == "worker error"
    assert console.not_network() == []
