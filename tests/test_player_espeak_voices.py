"""The player's voice list on an espeak-ng worker: espeak-ng speaks with its own voice for each language
and ignores reference audio (docs/protocol.md, *Named voices*), so the page offers no stored voice there
and says why; it offered them, and a voice picked was sent and played in espeak's voice without a word
(headless Chromium, the real espeak-ng engine; helpers in tests/player_support.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from npu_worker.engine.espeak import EspeakEngine
from tests.openai_support import tone_wav
from tests.player_support import snapshot, wait_for
from tests.timing import seconds

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTE = (
    "espeak-ng speaks with its own voice for each language (the Language field) and uses no reference "
    "audio: stored voices are not offered on this worker"
)


def test_an_espeak_worker_offers_no_stored_voice_and_says_why(open_player: Any) -> None:
    worker, page, console = open_player(EspeakEngine(), open_page=False)
    loaded_by = time.monotonic() + seconds(30)  # espeak-ng loads: the page's first poll is no 503
    while page.request.get(worker.url + "health").status != 200 and time.monotonic() < loaded_by:
        time.sleep(0.05)
    uploaded = page.request.post(
        worker.url + "v1/audio/voices",
        multipart={
            "name": "teacher",
            "ref_text": "안녕하세요 여러분",
            "audio_sample": {"name": "teacher.wav", "mimeType": "audio/wav", "buffer": tone_wav()},
        },
    )
    assert uploaded.status == 201, uploaded.text()

    page.goto(worker.url)
    wait_for(page, "s.worker.state === 'ready' && (s.voices.note !== '' || s.voices.offered.length > 1)")
    voices = snapshot(page)["voices"]
    assert voices["offered"] == [""], voices  # the worker's default alone
    assert voices["note"] == NOTE

    page.click("#voices-refresh")  # asked again: still none, still said
    page.fill("#input", "첫 문장입니다.")
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done'")
    voices = snapshot(page)["voices"]
    assert voices == {"offered": [""], "note": NOTE}
    assert page.is_hidden("#voice-filter") and console.errors == []
