"""The player when the worker refuses a request or ends it with an error (headless Chromium; a real worker,
or a rogue one for what the real worker sends only when its engine or queue fails; helpers in
tests/player_support.py)."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import WSCloseCode, web

from tests.player_support import snapshot, wait_for
from tests.test_player_rogue_worker import rogue_page, serving, start_playing
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


def test_an_error_that_ends_a_running_request_is_shown_with_its_rows(browser: Any) -> None:
    """A stream that cannot go on whole (an engine failure, with `--queue redis` the engine nodes all failed
    to load) gets a request-level `error`, then the worker closes the socket with 1011."""
    failure = "ModelLoadError: every engine node failed to load its model"

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_json({"event": "start", "total": 2, "backend": "rogue", "device": "cpu"})
        await socket.send_json({"event": "progress", "idx": 0, "status": "synth"})
        await socket.send_json({"event": "audio_start", "idx": 0, "sample_rate": 24000})
        await socket.send_bytes(b"\x00\x40" * 2400)
        await socket.send_json({"event": "audio_end", "idx": 0, "samples": 2400, "chunks": 1})
        await socket.send_json({"event": "progress", "idx": 0, "status": "ok", "elapsed_sec": 0.01})
        await socket.send_json({"event": "progress", "idx": 1, "status": "synth"})
        await socket.send_json({"event": "error", "idx": None, "error": failure})
        await socket.close(code=WSCloseCode.INTERNAL_ERROR, message=b"internal error")
        return socket

    with rogue_page(browser, serving(ws)) as (page, console):
        start_playing(page, ("가.", "나."))
        wait_for(page, "s.run && s.run.running === false && s.run.audioDrained")
        state = snapshot(page)
        # The close's own sentence replaced the worker's: "closed during the request (code 1011: internal
        # error)", and the unfinished row said "connection closed".
        assert failure in state["message"] and "1011" in state["message"]
        assert [(s["state"], s["error"]) for s in state["sections"]] == [("done", None), ("failed", failure)]
        assert state["figures"]["summary"].startswith("Finished: 1 ok, 1 failed")
        assert console.errors == []
