"""The player's voice list: the stored voices of `GET /v1/audio/voices` offered and spoken with (a voice
uploaded through the real API, picked in the page, received by the worker's engine), the token sent as
a header only, a list that cannot be had explained, and a hostile list (HTML in names, thousands of
voices) drawn as text and bounded, none on an espeak-ng worker (headless Chromium; helpers in
tests/player_support.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiohttp import web

from npu_worker.engine.espeak import EspeakEngine
from npu_worker.protocol import UnknownVoice
from tests.openai_support import tone_wav
from tests.player_support import snapshot, wait_for
from tests.test_player_rogue_worker import ROGUE_HEALTH, rogue_page, serving
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TOKEN = "s3cret"


def upload_voice(page: Any, worker_url: str, name: str, ref_text: str) -> None:
    """POST /v1/audio/voices over the wire, as a caller uploads a voice."""
    answer = page.request.post(
        worker_url + "v1/audio/voices",
        headers={"Authorization": f"Bearer {TOKEN}"},
        multipart={
            "name": name,
            "ref_text": ref_text,
            "audio_sample": {"name": f"{name}.wav", "mimeType": "audio/wav", "buffer": tone_wav()},
        },
    )
    assert answer.status == 201, answer.text()


def test_an_uploaded_voice_is_offered_picked_and_spoken_with(open_player: Any) -> None:
    engine = ToneEngine()
    worker, page, console = open_player(engine, token=TOKEN, open_page=False)
    upload_voice(page, worker.url, "teacher", "안녕하세요 여러분")
    requests: list[Any] = []
    page.on("request", lambda request: requests.append(request))
    page.goto(worker.url + f"?token={TOKEN}")
    wait_for(page, "s.voices.offered.includes('teacher')")
    assert snapshot(page)["voices"]["offered"] == ["", "teacher"]  # the default, then the upload

    # One uploaded while the page is open is offered once the list is asked again.
    upload_voice(page, worker.url, "narrator", "둘째 목소리")
    page.click("#voices-refresh")
    wait_for(page, "s.voices.offered.includes('narrator')")

    page.select_option("#voice", "teacher")
    page.fill("#input", "첫 문장입니다.")
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done'")
    spoken = engine.requests[-1].voice
    assert spoken.ref_wav is not None and spoken.ref_wav.endswith("/voices/teacher.wav")
    assert spoken.ref_text == "안녕하세요 여러분"

    # The voice picked, deleted meanwhile: the next list falls back to the default and says so.
    gone = page.request.delete(
        worker.url + "v1/audio/voices/teacher", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert gone.status == 200, gone.text()
    page.click("#voices-refresh")
    wait_for(page, "!s.voices.offered.includes('teacher')")
    assert snapshot(page)["voices"]["note"] == (
        "the voice teacher is no longer offered: Play speaks with the worker's default"
    )
    assert page.input_value("#voice") == ""

    lists = [r for r in requests if r.url.endswith("/v1/audio/voices")]
    assert len(lists) == 3
    assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in lists)
    # Beside the address typed (read once, then out of the address bar), only the socket's URL holds it.
    fetched = [r.url for r in requests if r.resource_type != "document" and not r.url.startswith("ws")]
    assert fetched and not any(TOKEN in url for url in fetched)
    assert console.errors == []


def test_a_voice_deleted_after_the_list_was_read_is_said_in_words_and_the_list_read_again(
    open_player: Any,
) -> None:
    """Play with a voice deleted since the list was read: the page said only "The worker refused the
    request: UnknownVoice: …" and kept offering it; it now says what happened and reads the list again."""
    worker, page, console = open_player(ToneEngine(), token=TOKEN, open_page=False)
    upload_voice(page, worker.url, "teacher", "안녕하세요 여러분")
    page.goto(worker.url + f"?token={TOKEN}")
    wait_for(page, "s.voices.offered.includes('teacher')")
    page.select_option("#voice", "teacher")
    gone = page.request.delete(
        worker.url + "v1/audio/voices/teacher", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert gone.status == 200, gone.text()
    page.fill("#input", "첫 문장입니다.")
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "!s.voices.offered.includes('teacher')")
    state = snapshot(page)
    assert state["message"].startswith(
        "The voice picked is no longer on the worker (deleted after the voice list was read): "
        "the list has been read again; pick a voice from it and play again. (UnknownVoice: "
    ), state["message"]
    assert state["voices"]["note"] == (
        "the voice teacher is no longer offered: Play speaks with the worker's default"
    )
    assert page.input_value("#voice") == ""
    assert console.errors == []


class NoDefaultVoice(ToneEngine):
    """As ZipVoice started without --ref-wav: a request naming no voice is refused (UnknownVoice)."""

    def check_voice(self, ref_wav: str | None) -> None:
        if ref_wav is None:
            raise UnknownVoice("this worker has no default voice (it was started without --ref-wav)")


def test_worker_default_on_a_worker_without_one_shows_the_workers_own_words(open_player: Any) -> None:
    """ "worker default" played on a worker with no default voice: the page blamed a deleted voice nobody
    picked ("The voice picked is no longer on the worker …") and read the list again; it now shows the
    worker's own message."""
    worker, page, console = open_player(NoDefaultVoice(), token=TOKEN, open_page=False)
    requests: list[Any] = []
    page.on("request", lambda request: requests.append(request))
    page.goto(worker.url + f"?token={TOKEN}")
    wait_for(page, "s.worker.state === 'ready' && s.voices.offered.length === 1")
    assert page.input_value("#voice") == ""
    page.fill("#input", "첫 문장입니다.")
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.message !== ''")
    assert snapshot(page)["message"] == (
        "The worker refused the request: UnknownVoice: this worker has no default voice "
        "(it was started without --ref-wav)"
    )
    assert len([r for r in requests if r.url.endswith("/v1/audio/voices")]) == 1  # not read again
    assert console.errors == []


def test_a_voice_list_refused_for_want_of_a_token_is_explained(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine(), token=TOKEN, open_page=False)
    page.goto(worker.url)  # no ?token=: /health answers, the voice list is a 401
    wait_for(page, "s.worker.state === 'ready' && s.voices.note !== ''")
    state = snapshot(page)
    assert state["voices"]["offered"] == [""]
    assert state["voices"]["note"] == (
        "the worker wants a token for its voice list (open the page with ?token= followed by it): "
        "only the worker's default voice is offered"
    )


def hostile_voices(count: int, received: list[dict[str, Any]]) -> web.Application:
    """A rogue worker whose voice list holds HTML and over-long names among `count` good ones, and whose
    /ws records in `received` the request it was sent."""
    hostile = [
        "<img src=x onerror=\"document.title='owned'\">",
        "</option><script>document.title='owned'</script>",
        "x" * 100_000,
    ]
    data = [{"name": name, "source": "uploaded", "ref_text": "<b>bold</b>"} for name in hostile]
    data += [{"name": f"voice{i}", "source": "uploaded", "ref_text": "<i>t</i>"} for i in range(count)]

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        received.append(await socket.receive_json())
        await socket.send_json({"event": "start", "total": 1, "backend": "rogue", "device": "cpu"})
        await socket.send_json(
            {"event": "done", "ok_count": 0, "fail_count": 0, "elapsed_total_sec": 0.0, "cancelled": False}
        )
        async for _ in socket:
            pass
        return socket

    return serving(ws, voices_body={"object": "list", "voices": [v["name"] for v in data], "data": data})


def test_hostile_names_are_never_markup_and_thousands_of_voices_are_bounded(browser: Any) -> None:
    received: list[dict[str, Any]] = []
    with rogue_page(browser, hostile_voices(3000, received)) as (page, console):
        wait_for(page, "s.worker.state === 'ready' && s.voices.offered.length > 1")
        state = snapshot(page)
        assert state["voices"]["offered"][:3] == ["", "voice0", "voice1"]
        assert len(state["voices"]["offered"]) == 1 + 500
        assert state["voices"]["note"] == (
            "showing 500 of 3000 stored voices (type in the filter box to find the others); "
            "3 voices with a name that is no voice name not offered"
        )
        assert page.title() != "owned"
        assert page.locator("#voice img, #voice script, #voice b, #voice i").count() == 0
        page.select_option("#voice", "voice499")
        page.fill("#input", "one")
        page.click("#play")
        wait_for(page, "s.run && !s.run.running")
        assert received[0]["ref_wav"] == "voice499"

        # Past the 500 offered: the filter box (shown since some are not) finds any stored voice by name,
        # keeping the one chosen; it could not be picked at all before.
        page.fill("#voice-filter", "voice2999")
        wait_for(page, "s.voices.offered.includes('voice2999')")
        state = snapshot(page)
        assert state["voices"]["offered"] == ["", "voice499", "voice2999"]
        assert state["voices"]["note"] == (
            '1 stored voice matching "voice2999"; 3 voices with a name that is no voice name not offered'
        )
        page.select_option("#voice", "voice2999")  # (Play sends the field's value: voice499's above)
        page.fill("#voice-filter", "")
        wait_for(page, "s.voices.offered.length === 1 + 501")  # the 500 first, and the one chosen kept
        assert page.input_value("#voice") == "voice2999"
        assert console.errors == []


def listing(*names: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"name": name, "source": "uploaded"} for name in names]}


def test_a_slow_list_answered_after_a_newer_one_does_not_replace_it(browser: Any) -> None:
    """The list asked when the worker became ready hangs; ↻ voices asks again and is answered at once
    (`new`), then the first answers (`old`): the older answer was shown last, the newer list lost."""
    asked: list[str] = []
    newer_answered = asyncio.Event()

    async def voices(request: web.Request) -> web.Response:
        asked.append(request.path)
        if len(asked) == 1:
            await newer_answered.wait()
            return web.json_response(listing("old"))
        newer_answered.set()
        return web.json_response(listing("new"))

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        return socket

    with rogue_page(browser, serving(ws, voices_handler=voices)) as (page, console):
        finished: list[str] = []
        page.on("requestfinished", lambda request: finished.append(request.url))
        deadline = time.monotonic() + 30
        while not asked and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert asked, "the page never asked for its voice list"
        page.click("#voices-refresh")
        while sum(url.endswith("/v1/audio/voices") for url in finished) < 2 and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        page.wait_for_timeout(300)  # the older answer, arrived, is handled in the page's next turns
        assert snapshot(page)["voices"]["offered"] == ["", "new"]
        assert console.errors == []


ESPEAK_NOTE = (
    "espeak-ng speaks with its own voice for each language (the Language field) and uses no reference "
    "audio: stored voices are not offered on this worker"
)


def test_an_espeak_worker_offers_no_stored_voice_and_says_why(open_player: Any) -> None:
    """espeak-ng speaks with its own voice for each language and ignores reference audio (docs/protocol.md,
    *Named voices*): the page offered the stored voices there, and one picked was sent and played in
    espeak's voice without a word (the real espeak-ng engine)."""
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
    assert voices["note"] == ESPEAK_NOTE

    page.click("#voices-refresh")  # asked again: still none, still said
    page.fill("#input", "첫 문장입니다.")
    wait_for(page, "s.sections.length === 1")
    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done'")
    voices = snapshot(page)["voices"]
    assert voices == {"offered": [""], "note": ESPEAK_NOTE}
    assert page.is_hidden("#voice-filter") and console.errors == []


def test_a_worker_restarted_on_another_engine_between_two_polls_is_asked_its_list_again(browser: Any) -> None:
    """A worker restarted within the page's 2 s /health poll never read as not ready: the list was not
    asked again and its line stayed the old worker's (espeak-ng's "not offered" beside offered voices)."""

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        return socket

    health = {**ROGUE_HEALTH, "backend": "espeak-ng", "start_id": "first"}
    with rogue_page(browser, serving(ws, health, listing("teacher"))) as (page, console):
        wait_for(page, "s.worker.state === 'ready' && s.voices.note !== ''")
        assert snapshot(page)["voices"] == {"offered": [""], "note": ESPEAK_NOTE}
        health.update(backend="zipvoice-onnx", start_id="second")  # what the rogue's next /health answers
        wait_for(page, "s.voices.offered.length === 2 && s.voices.note !== " + repr(ESPEAK_NOTE))
        assert snapshot(page)["voices"] == {"offered": ["", "teacher"], "note": ""}
        assert console.errors == []
