"""The player while its worker boots, goes down or drops the connection mid-request, or `?worker=` names
a path of it rather than it (headless Chromium, a real worker; helpers in tests/player_support.py)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cut_proxy import CuttableProxy
from tests.player_support import choose_sections, snapshot, wait_for
from tests.redis_server import RedisServer
from tests.timing import seconds
from tests.tone_engine import ToneEngine

pytestmark = [pytest.mark.browser, pytest.mark.slow]


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


def test_a_worker_whose_redis_is_down_is_not_shown_as_booting(
    open_player: Any, redis_server: RedisServer
) -> None:
    """`--queue redis` and Redis gone: /health answers 503 with `status: fail` and the error, while the
    model is loaded; the page read every 503 as "the worker is booting (loading its model)"."""
    worker, page, console = open_player(ToneEngine(), queue=redis_server.url)
    wait_for(page, "s.worker.state === 'ready'")
    redis_server.stop()
    wait_for(page, "s.worker.state !== 'ready'")
    state = snapshot(page)
    assert state["worker"]["state"] == "error", state["worker"]
    assert "QueueUnavailable: Redis is unreachable" in state["message"]
    assert "booting" not in page.inner_text("#worker-status") + state["message"]
    assert console.not_network() == []  # the browser logs each 503 /health itself


WORKER_ADDRESS_ADVICE = (
    "?worker= takes the address the worker answers /health under (such as http://127.0.0.1:7768/, or the "
    "folder a proxy serves it from), not a path of its API such as /v1/"
)


def test_a_path_of_the_worker_as_worker_reads_as_a_sentence(open_player: Any) -> None:
    """`?worker=` naming a path of a real worker (its OpenAI base URL `…/v1/`, which an SDK user has at
    hand, or a mistyped folder): the page asks `…/v1/health`, a 404. It showed the worker's JSON cut at 80
    characters ("error must be a string, not {"message":"no such endpoint: GET /v1/he"), or, for a
    v1-shaped 404 (`"status": "fail"`), "the worker cannot take requests: BadRequest: no such endpoint …"
    of a worker that could; now a sentence: the address asked, the worker's words, what `?worker=` takes."""
    worker, page, console = open_player(ToneEngine(), open_page=False)
    # the OpenAI shape, {"error": {"message", "code"}}; v1's, {"status": "fail", "error": "…"}
    for path in ("v1/", "tts/"):
        asked = f"{worker.url}{path}health"
        page.goto(f"{worker.url}?worker={worker.url}{path}")
        wait_for(page, "s.worker.state === 'error'")
        state = snapshot(page)
        words = f"BadRequest: no such endpoint: GET /{path}health"
        assert state["worker"]["message"] == f"GET {asked} answered 404: {words}: {WORKER_ADDRESS_ADVICE}"
        assert state["message"] == state["worker"]["message"]
        assert "{" not in state["message"] and "cannot take requests" not in state["message"]
        assert page.inner_text("#worker-status") == "worker error"
    assert console.not_network() == []
