"""The browser preview player (client_js/) in headless Chromium against a real worker.

Each test starts the worker (`build_app` with a real engine on a TCP port), opens the page it serves at
`/`, and drives it like a user: load the lecture JSON, pick sections, press Play or Cancel. The page
exposes its state as `window.npuPlayer.snapshot()` (the same numbers it draws); tests also read what the
page shows.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from npu_worker.config import Settings
from tests.browser_support import (
    ConsoleWatch,
    serve_static,
    serve_worker,
)
from tests.cut_proxy import CuttableProxy
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker/bench/lecture_ko_39.json"  # shipped in the wheel
CLIENT_DIR = Path(__file__).resolve().parents[1] / "client_js"
# Every run leaves its screenshot in the ignored test-output/; the committed one in benchmarks/ is only
# rewritten on request (NPU_WORKER_UPDATE_SCREENSHOT=1), so running the suite never dirties the tree.
REPO = Path(__file__).resolve().parents[1]
SCREENSHOT = REPO / "test-output/player-screenshot.png"
COMMITTED_SCREENSHOT = REPO / "benchmarks/player-screenshot.png"


@pytest.fixture
def lecture() -> Path:
    return LECTURE


Player = tuple[Any, Any, ConsoleWatch]  # (worker, page, console)


@pytest.fixture
def open_player(browser: Any, settings: Settings) -> Iterator[Callable[..., Player]]:
    """`worker, page, console = open_player(engine, **setting_overrides)`: the worker started and its page
    opened (`open_page=False`: not yet); all closed after the test."""
    with ExitStack() as stack:

        def start(engine: Any, *, open_page: bool = True, **overrides: Any) -> Player:
            worker = stack.enter_context(serve_worker(settings.replace(**overrides), engine))
            context = browser.new_context(viewport={"width": 1280, "height": 860})
            stack.callback(context.close)
            page = context.new_page()
            page.set_default_timeout(seconds(30) * 1000)
            console = ConsoleWatch()
            console.attach(page)
            if open_page:
                page.goto(worker.url)
            return worker, page, console

        yield start


def snapshot(page: Any) -> dict[str, Any]:
    return page.evaluate("window.npuPlayer.snapshot()")


def wait_for(page: Any, condition: str, timeout: float = 30) -> None:
    """Wait until `condition` (JS over `s`, the page's snapshot) holds; on timeout, say what the page had."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            f"() => {{ const s = window.npuPlayer.snapshot(); return {condition}; }}",
            timeout=seconds(timeout) * 1000,
            polling=50,
        )
    except PlaywrightTimeout:
        state = json.dumps(snapshot(page), indent=1, ensure_ascii=False)
        raise AssertionError(
            f"page never reached {condition}\nsnapshot: {state}\nlog:\n{page.inner_text('#log')[-4000:]}"
        ) from None


def wait_until(condition: Callable[[], bool], failure: str, timeout: float = 10) -> None:
    """Poll a server-side condition (over the wire) until it holds."""
    deadline = time.monotonic() + seconds(timeout)
    while not condition():
        assert time.monotonic() < deadline, failure
        time.sleep(0.05)


def choose_sections(page: Any, lecture: Path, spec: str, count: int) -> None:
    page.set_input_files("#file", str(lecture))
    page.fill("#range", spec)
    wait_for(page, f"s.sections.length === {count}")


def shown_number(page: Any, selector: str) -> float:
    text = page.inner_text(selector).strip()
    match = re.fullmatch(r"([\d,]+(?:\.\d+)?)(?: ms)?", text)
    assert match, f"{selector} shows {text!r}, not a number"
    return float(match.group(1).replace(",", ""))


def assert_silent_for_a_while(page) -> dict:
    """After a stop: the audio clock runs on 0.3 s and nothing more is played; the page's state then."""
    stopped_at = snapshot(page)["figures"]
    later = stopped_at["audioClockFrame"] + stopped_at["contextRate"] * 0.3
    wait_for(page, f"s.figures.audioClockFrame > {later}")
    state = snapshot(page)
    assert state["figures"]["playedFrames"] == stopped_at["playedFrames"]
    return state


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


def test_a_booting_worker_is_shown_until_it_is_ready(open_player: Any) -> None:
    gate = threading.Event()
    engine = ToneEngine()
    engine.load = lambda: gate.wait(seconds(30))  # type: ignore[method-assign]
    worker, page, console = open_player(engine)

    wait_for(page, "s.worker.state === 'booting'")
    assert "booting" in page.inner_text("#worker-status")
    assert "booting" in page.inner_text("#message")
    assert worker.health()[0] == 503

    gate.set()
    wait_for(page, "s.worker.state === 'ready'")
    assert page.is_hidden("#message")
    assert console.not_network() == []  # the browser logs each 503 /health itself


def test_a_worker_that_goes_down_is_reported(open_player: Any) -> None:
    worker, page, console = open_player(ToneEngine())
    wait_for(page, "s.worker.state === 'ready'")
    worker.stop()
    wait_for(page, "s.worker.state === 'down'")
    assert "unreachable" in page.inner_text("#worker-status")
    assert "not running" in page.inner_text("#message")
    assert console.not_network() == []


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
    assert health_urls and not any("token" in url for url in health_urls)


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
    assert state["figures"]["summary"].startswith("Cancelled: 0 ok, 0 failed")
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
    assert state["figures"]["summary"].startswith("Cancelled: 3 ok, 0 failed")
    assert all(s["state"] in ("done", "cancelled") for s in state["sections"])
    assert state["sections"][-1]["state"] == "cancelled"
    assert not page.is_enabled("#cancel") and page.is_enabled("#play")
    assert console.errors == []


async def _cut(proxy: CuttableProxy) -> None:
    proxy.cut()


def test_a_connection_lost_mid_request_has_a_summary_that_agrees_with_the_rows(
    open_player: Any, lecture: Path
) -> None:
    worker, page, console = open_player(ToneEngine(delay_per_chunk=0.1), open_page=False)
    port = int(worker.url.rstrip("/").rsplit(":", 1)[1])
    proxy = worker.run(CuttableProxy(port).start())
    try:
        page.goto(f"{worker.url}?worker={proxy.base}/")  # the page talks to the worker through the proxy
        wait_for(page, "s.worker.state === 'ready'")
        choose_sections(page, lecture, "0-2", 3)

        page.click("#play")
        wait_for(page, "s.run && s.sections[0].synthSec != null")  # section 0 is synthesised, 1 is under way
        worker.run(_cut(proxy))
        wait_for(page, "s.run.running === false && s.sections[0].state === 'done'")
        state = snapshot(page)
        assert [s["state"] for s in state["sections"]] == ["done", "failed", "failed"]
        assert state["figures"]["summary"].startswith("Finished: 1 ok, 2 failed")
        assert "1 done · 2 failed" in page.inner_text("#slide-count")
    finally:
        worker.run(proxy.close())


def test_play_while_the_worker_boots_makes_no_context_and_the_next_play_plays(
    open_player: Any, lecture: Path
) -> None:
    gate = threading.Event()
    engine = ToneEngine()
    engine.load = lambda: gate.wait(seconds(30))  # type: ignore[method-assign]
    worker, page, console = open_player(engine)
    wait_for(page, "s.worker.state === 'booting'")
    choose_sections(page, lecture, "0", 1)

    page.click("#play")  # /health says 503 with sample_rate null: the stream's rate is not known yet
    wait_for(page, "s.message.includes('still booting')")
    assert snapshot(page)["figures"]["contextRate"] == 0  # no AudioContext at the device's rate
    assert snapshot(page)["run"] is None

    gate.set()
    wait_for(page, "s.worker.state === 'ready'")
    page.click("#play")  # the first Play after boot plays (no rate mismatch)
    wait_for(page, "s.sections[0].state === 'done' && s.run.audioDrained")
    state = snapshot(page)
    assert state["figures"]["contextRate"] == state["run"]["streamRate"] == 24000
    assert "now streams" not in state["message"]
    assert console.not_network() == []  # the browser logs each 503 /health itself


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
