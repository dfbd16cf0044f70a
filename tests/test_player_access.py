"""Who may use the player and what it keeps to itself: page origins the worker allows or not, the
token (never shown, out of the address bar), the socket's close, files that cannot be loaded
(headless Chromium, a real worker; helpers in tests/player_support.py)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import serve_static
from tests.player_support import (
    CLIENT_DIR,
    choose_sections,
    snapshot,
    wait_for,
    wait_until,
)
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_page_from_an_allowed_origin_plays(open_player: Any, lecture: Path) -> None:
    with serve_static(CLIENT_DIR) as elsewhere:
        worker, page, console = open_player(ToneEngine(), allowed_origins=(elsewhere,), open_page=False)
        page.goto(f"{elsewhere}/index.html?worker={worker.url}")
        wait_for(page, "s.worker.state === 'ready'")
        choose_sections(page, lecture, "0", 1)

        page.click("#play")
        wait_for(page, "s.sections[0].state === 'done'")
        assert console.errors == []


def test_a_page_from_an_origin_the_worker_does_not_allow_says_so(open_player: Any, lecture: Path) -> None:
    with serve_static(CLIENT_DIR) as elsewhere:
        worker, page, console = open_player(
            ToneEngine(), allowed_origins=("https://lectures.example",), open_page=False
        )
        page.goto(f"{elsewhere}/index.html?worker={worker.url}")
        wait_for(page, "s.worker.state === 'down'")
        assert "does not allow this page's origin" in page.inner_text("#message")
        choose_sections(page, lecture, "0", 1)

        page.click("#play")
        wait_for(page, "s.message.includes('--allowed-origins')")
        assert snapshot(page)["run"] is None  # nothing was sent
        assert worker.health()[1]["jobs_running"] == 0


def test_a_page_on_an_allowed_origin_calls_the_json_api_with_a_token(open_player: Any) -> None:
    """A JSON POST with an Authorization header needs a CORS preflight; the browser enforces the answer."""
    call = """async (base) => {
        try {
            const response = await fetch(new URL("synth_batch?async=1", base), {
                method: "POST",
                headers: {"Content-Type": "application/json", "Authorization": "Bearer s3cret"},
                body: JSON.stringify({sections: [{idx: 0, text: "가나다."}]}),
            });
            return {status: response.status, body: await response.json()};
        } catch (error) {
            return {blocked: String(error)};
        }
    }"""
    with serve_static(CLIENT_DIR) as allowed, serve_static(CLIENT_DIR) as other:
        worker, page, console = open_player(
            ToneEngine(), allowed_origins=(allowed,), token="s3cret", open_page=False
        )
        page.goto(f"{allowed}/index.html?worker={worker.url}&token=s3cret")
        answer = page.evaluate(call, worker.url)
        assert answer.get("status") == 200 and answer["body"]["job_id"], answer
        page.goto(f"{other}/index.html?worker={worker.url}&token=s3cret")
        assert "blocked" in page.evaluate(call, worker.url)  # refused: the page cannot read or send
        wait_until(lambda: worker.health()[1]["jobs_running"] == 0, "the allowed job did not finish")


def test_a_second_connect_shares_the_first_and_close_says_1000(
    open_player: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="npu_worker.ws_server.routes")
    worker, page, console = open_player(ToneEngine())
    same = page.evaluate(
        """async () => {
            const {Channel, socketUrl, workerBase} = await import("./channel.js");
            const channel = new Channel(socketUrl(workerBase()), {onEvent() {}, onProblem() {}});
            const first = channel.connect();
            const second = channel.connect();  // before the first settled
            await Promise.all([first, second]);  // an orphaned first promise would never settle
            await channel.close();
            return first === second;
        }"""
    )
    assert same is True
    wait_until(lambda: "ws closed: code 1000" in caplog.text, f"no normal close: {caplog.text[-2000:]}")
    assert console.errors == []


def test_a_file_that_cannot_be_loaded_says_why(open_player: Any, tmp_path: Path) -> None:
    worker, page, console = open_player(ToneEngine())
    wait_for(page, "s.worker.state === 'ready'")
    page.set_input_files(
        "#file", {"name": "bad.json", "mimeType": "application/json", "buffer": b"\xff\xfe{"}
    )
    wait_for(page, "s.message.includes('Could not load bad.json: it is not UTF-8 text')")
    big = tmp_path / "big.txt"  # a path, which the local browser reads itself: as a buffer the 9 MiB
    big.write_bytes(b"a" * (9 * 1024 * 1024))  # went through Playwright's protocol in base64
    page.set_input_files("#file", big)
    wait_for(page, "s.message.includes('big.txt is 9.0 MiB; the limit is 8 MiB')")
    assert console.errors == []


def test_a_json_file_that_is_no_lecture_is_refused_not_read_aloud(open_player: Any) -> None:
    """Since only `{"`, `[{`… is read as JSON, a .json that does not parse ({'sections': …}, as Python
    prints a dict) was put in the box as text: no error, and Play spoke its braces and quotes aloud."""
    worker, page, console = open_player(ToneEngine())
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", "그대로 둘 글.")
    wait_for(page, "s.sections.length === 1")
    for name, body in [("print.json", b"{'sections': [{'idx': 0, 'text': 'a'}]}"), ("word.json", b'"a"')]:
        page.set_input_files("#file", {"name": name, "mimeType": "application/json", "buffer": body})
        wait_for(page, f"s.message.includes('Could not load {name}: it is not a lecture JSON')")
        assert page.input_value("#input") == "그대로 둘 글."  # what the box had is kept
    page.set_input_files("#file", {"name": "script.txt", "mimeType": "text/plain", "buffer": b"{a} b."})
    wait_for(page, "s.sections.length === 1 && s.message === ''")  # a text file is still text
    assert page.input_value("#input") == "{a} b."
    assert console.errors == []


def test_the_token_never_shows_and_leaves_the_address_bar(open_player: Any, lecture: Path) -> None:
    """A refused WebSocket's error names the socket URL: its token is shown as `token=***`, in the message
    and the Event log alike; the token is out of the address bar once read, and /health polls go without it."""
    worker, page, console = open_player(ToneEngine(), token="s3cret", open_page=False)
    health_urls: list[str] = []
    page.on("request", lambda request: "/health" in request.url and health_urls.append(request.url))
    page.goto(worker.url + "?token=wr0ngTok")  # a wrong token: /health answers, the socket is refused
    wait_for(page, "s.worker.state === 'ready'")
    assert "token" not in page.url
    choose_sections(page, lecture, "0", 1)

    page.click("#play")
    wait_for(page, "s.message.includes('refused the WebSocket')")
    wait_for(page, "document.getElementById('log').textContent.includes('connect failed')")
    log = page.text_content("#log") or ""  # the log panel is folded: its text, not what is drawn
    assert "wr0ngTok" not in page.inner_text("#message") + log + page.content()
    assert "token=***" in log
    # The advice reads whole (its "(?token=…). Start the worker …" was masked into "(?token=*** Start …")
    # and names the token the page holds.
    message = page.inner_text("#message")
    assert "***" not in message
    assert "the token this page holds is not the worker's" in message
    assert message.endswith("start the worker with --allowed-origins listing it.")
    assert health_urls and not any("token" in url for url in health_urls)


def test_the_token_survives_a_reload_of_the_tab_and_nowhere_else(open_player: Any, lecture: Path) -> None:
    """The token left the address bar once read, so a reload lost it and every Play was refused: it is
    kept for the tab (sessionStorage), never in localStorage or the URL, and a new tab has none; an empty
    `?token=` forgets it."""
    worker, page, console = open_player(ToneEngine(), token="s3cret", open_page=False)
    page.goto(worker.url + "?token=s3cret")
    wait_for(page, "s.worker.state === 'ready'")
    page.reload()
    wait_for(page, "s.worker.state === 'ready'")
    assert "token" not in page.url
    choose_sections(page, lecture, "0", 1)
    page.click("#play")
    wait_for(page, "s.sections[0].state === 'done'")
    assert page.evaluate("window.localStorage.length") == 0
    assert "s3cret" in page.evaluate("JSON.stringify(Object.values(window.sessionStorage))")
    other_tab = page.context.new_page()
    other_tab.goto(worker.url)
    assert other_tab.evaluate("window.sessionStorage.length") == 0
    page.goto(worker.url + "?token=")  # an empty one: the kept token is forgotten, and not used
    wait_for(page, "s.worker.state === 'ready'")
    assert page.evaluate("window.sessionStorage.length") == 0
    choose_sections(page, lecture, "0", 1)
    page.click("#play")
    wait_for(page, "s.message.includes('refused the WebSocket')")


def test_the_same_lecture_file_chosen_again_reloads_the_box(open_player: Any, lecture: Path) -> None:
    """Edit the loaded lecture, then choose the same file to start over: the file input's value had not
    changed, so the browser fired no `change` and the edited text stayed."""
    worker, page, console = open_player(ToneEngine())
    choose_sections(page, lecture, "", 39)
    page.fill("#input", "고친 글.")
    wait_for(page, "s.sections.length === 1")
    page.set_input_files("#file", str(lecture))
    wait_for(page, "s.sections.length === 39")
    assert console.errors == []


def test_a_play_whose_worklet_cannot_load_closes_its_audio_context(open_player: Any) -> None:
    """The page's own server gone (the worker, at ?worker=, still up): each Play made an AudioContext,
    failed to load the worklet into it and left it open, one more audio thread per click."""
    with serve_static(CLIENT_DIR) as elsewhere:
        worker, page, console = open_player(ToneEngine(), allowed_origins=(elsewhere,), open_page=False)
        page.add_init_script(
            """(() => { const Made = window.AudioContext; window.openContexts = new Set();
            window.AudioContext = class extends Made {
                constructor(...args) { super(...args); window.openContexts.add(this); }
                close() { window.openContexts.delete(this); return super.close(); } }; })()"""
        )
        page.goto(f"{elsewhere}/index.html?worker={worker.url}")
        wait_for(page, "s.worker.state === 'ready'")
        page.fill("#input", "가.")
        wait_for(page, "s.sections.length === 1")
    for _ in range(3):  # the page's server is gone: the worklet module cannot be fetched
        page.evaluate("document.getElementById('message').hidden = true")
        page.click("#play")
        wait_for(page, "s.message.startsWith('No sound: the audio worklet could not be loaded')")
    assert page.evaluate("window.openContexts.size") == 0
    assert snapshot(page)["run"] is None  # nothing was sent
