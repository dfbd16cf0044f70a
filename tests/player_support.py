"""What the player's browser tests share: the page opened on a real worker (`open_player`), its state
(`snapshot`, `wait_for`) and the lecture.

Each test starts the worker (`build_app` with a real engine on a TCP port), opens the page it serves at
`/`, and drives it like a user: load the lecture JSON, pick sections, press Play or Cancel. The page
exposes its state as `window.npuPlayer.snapshot()` (the same numbers it draws); tests also read what the
page shows.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from npu_worker.config import Settings
from tests.browser_support import ConsoleWatch, serve_worker
from tests.timing import seconds

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
