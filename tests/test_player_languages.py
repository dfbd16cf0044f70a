"""The player's Language field: the worker's `/health` languages offered under it, and one it does not
list said before Play sends anything (headless Chromium, the real espeak-ng engine; helpers in
tests/player_support.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from npu_worker.engine.espeak import EspeakEngine
from tests.player_support import snapshot, wait_for
from tests.timing import seconds

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_language_the_worker_does_not_list_is_said_before_play_sends_anything(open_player: Any) -> None:
    """`zz`: the page connected and sent the request, and the worker's `UnknownLanguage` refusal was all
    it said; now the field offers /health's languages, and Play says so without opening a socket."""
    worker, page, console = open_player(EspeakEngine(), open_page=False)
    sockets: list[Any] = []
    page.on("websocket", lambda socket: sockets.append(socket))
    loaded_by = time.monotonic() + seconds(30)  # espeak-ng loads: the page's first poll is no 503
    while page.request.get(worker.url + "health").status != 200 and time.monotonic() < loaded_by:
        time.sleep(0.05)
    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready'")
    offered = page.evaluate("[...document.querySelectorAll('#languages option')].map((o) => o.value)")
    assert {"ko", "en", "en-us", "korean"} <= set(offered), offered
    page.fill("#lang", "zz")
    page.fill("#input", "첫 문장입니다.")
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.message !== ''")
    message = snapshot(page)["message"]
    assert message.startswith('The worker does not speak the language "zz": its /health lists'), message
    assert sockets == [] and snapshot(page)["sections"][0]["state"] == "idle"

    page.fill("#lang", "ko-KR")  # a region of a listed language: spoken, as the worker speaks it
    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done'")
    assert len(sockets) == 1 and console.errors == []
