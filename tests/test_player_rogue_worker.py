"""The player against a rogue worker (a small aiohttp app serving the page and a `/ws` of its own): what
a worker may send that the real one never does — odd-length binary frames, a `null` text frame, fields
of the wrong type in events and in `/health` — is carried over or refused by name, never thrown on."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aiohttp import web

from npu_worker.app import _static_handler
from tests.browser_support import ConsoleWatch, serve_app
from tests.player_support import CLIENT_DIR, snapshot, wait_for
from tests.timing import seconds

pytestmark = [pytest.mark.browser, pytest.mark.slow]


ROGUE_HEALTH = {"status": "ok", "loaded": True, "backend": "rogue", "device": "cpu", "sample_rate": 24000}
# Events a hostile `?worker=` may send, each with a field of the wrong type: the page drops them.
MISTYPED_EVENTS = [
    {"event": "audio_start", "idx": 0, "sample_rate": "24000", "format": "pcm_s16le"},
    {"event": "audio_end", "idx": 0, "samples": "lots", "chunks": 1},
    {"event": "progress", "idx": {"n": 1}, "status": "ok"},
    {"event": "error", "idx": 0, "error": 5},
    {"event": 7},
]


def rogue_worker(health_body: dict[str, Any] = ROGUE_HEALTH, mistyped: bool = False) -> web.Application:
    """Serves the player and a /ws that sends a `null` text frame, a section whose 3 samples come split
    at odd byte counts (3 + 3 bytes), and one that ends on half a sample (3 bytes); `mistyped` also sends
    MISTYPED_EVENTS before each section."""
    half = b"\x00\x40"  # s16le 0x4000: 0.5

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()  # the synth_batch request
        await socket.send_json({"event": "start", "total": 2, "backend": "rogue", "device": "cpu"})
        await socket.send_str("null")
        for idx, frames in ((0, [half + half[:1], half[1:] + half]), (1, [half + half[:1]])):
            samples = sum(map(len, frames)) // 2
            await socket.send_json({"event": "progress", "idx": idx, "status": "synth"})
            for event in MISTYPED_EVENTS if mistyped else []:
                await socket.send_json(event)
            await socket.send_json(
                {"event": "audio_start", "idx": idx, "sample_rate": 24000, "format": "pcm_s16le"}
            )
            for frame in frames:
                await socket.send_bytes(frame)
            await socket.send_json({"event": "audio_end", "idx": idx, "samples": samples, "chunks": 2})
            await socket.send_json(
                {"event": "progress", "idx": idx, "status": "ok", "elapsed_sec": 0.01, "duration_sec": 0.0}
            )
        await socket.send_json(
            {"event": "done", "ok_count": 2, "fail_count": 0, "elapsed_total_sec": 0.02, "cancelled": False}
        )
        async for _ in socket:  # until the page closes it
            pass
        return socket

    return serving(ws, health_body)


NO_VOICES = {"object": "list", "voices": [], "data": []}


def serving(
    ws: Any,
    health_body: dict[str, Any] = ROGUE_HEALTH,
    voices_body: dict[str, Any] = NO_VOICES,
    voices_handler: Any = None,
) -> web.Application:
    """The player's files, a `/health` answering `health_body`, a `GET /v1/audio/voices` answering
    `voices_body` (by default no stored voice; `voices_handler` instead when given), and the `/ws` handler `ws`."""

    async def health(request: web.Request) -> web.Response:
        return web.json_response(health_body)

    async def voices(request: web.Request) -> web.Response:
        return web.json_response(voices_body)

    app = web.Application()
    directory = (
        CLIENT_DIR  # the source checkout's (client_dir() would touch the disk under the browser's loop)
    )
    app.router.add_get("/health", health)
    app.router.add_get("/v1/audio/voices", voices_handler or voices)
    app.router.add_get("/ws", ws)
    app.router.add_get("/", _static_handler(directory))
    app.router.add_get("/{name:[A-Za-z0-9_.-]+}", _static_handler(directory))
    return app


@contextmanager
def rogue_page(browser: Any, app: web.Application) -> Iterator[tuple[Any, ConsoleWatch]]:
    """A fresh page on the player served by a rogue worker `app`, its console watched."""
    with serve_app(app) as url:
        context = browser.new_context()
        try:
            page = context.new_page()
            console = ConsoleWatch()
            console.attach(page)
            page.goto(url)
            yield page, console
        finally:
            context.close()


def start_playing(page: Any, texts: tuple[str, ...]) -> None:
    """Once the worker is ready, put `texts` in as sections and press Play."""
    wait_for(page, "s.worker.state === 'ready'")
    page.fill("#input", "\n\n".join(texts))
    wait_for(page, f"s.sections.length === {len(texts)}")
    page.click("#play")


def wait_on_the_page_clock(page: Any, condition: str) -> None:
    """`wait_for(page, condition)`, the page's clock (installed by the test) jumped a second at a time
    meanwhile: the player's own 5 s waits are run, not waited out in real time."""
    for _ in range(10):
        if page.evaluate(f"() => {{ const s = window.npuPlayer.snapshot(); return {condition}; }}"):
            return
        page.clock.fast_forward(1000)
    wait_for(page, condition)


def play_two_sections(page: Any) -> tuple[dict[str, Any], str]:
    """Play "가." and "나." to the end of the run: the snapshot and the Event log."""
    start_playing(page, ("가.", "나."))
    wait_for(page, "s.run && s.run.running === false && s.run.audioDrained")
    return snapshot(page), page.text_content("#log") or ""


def test_odd_byte_frames_are_carried_over_and_a_null_text_frame_is_reported(browser: Any) -> None:
    with rogue_page(browser, rogue_worker()) as (page, console):
        state, log = play_two_sections(page)
        # 3 + 3 bytes are 3 samples (a dropped odd byte would give 1 + 1, and shift the second).
        assert state["run"]["receivedSamples"] == 3 + 1
        assert state["figures"]["playedSourceSamples"] == 4
        assert "a text frame is not a JSON object: null" in log
        assert "section 1's audio ended on half a sample" in log
        assert "socket worker failed" not in log
        assert [s["state"] for s in state["sections"]] == ["done", "done"]
        assert console.errors == []


def test_mistyped_events_from_a_hostile_worker_are_dropped_and_the_run_plays(browser: Any) -> None:
    with rogue_page(browser, rogue_worker(mistyped=True)) as (page, console):
        state, log = play_two_sections(page)
        # A string sample_rate was a rate mismatch that cancelled the run; "lots" was added to the count.
        assert [s["state"] for s in state["sections"]] == ["done", "done"]
        assert state["run"]["receivedSamples"] == 3 + 1
        assert "an event was dropped: sample_rate must be an integer sample rate" in log
        assert 'an event was dropped: samples must be a non-negative integer, not "lots"' in log
        assert "an event was dropped: an event without an `event` kind" in log
        assert "now streams" not in state["message"]
        assert console.errors == []


def test_a_health_body_with_mistyped_fields_is_an_error_not_a_broken_page(browser: Any) -> None:
    bad = {**ROGUE_HEALTH, "ref_wav": 5, "voices": [7]}
    with rogue_page(browser, rogue_worker(health_body=bad)) as (page, console):
        wait_for(page, "s.worker.state === 'error'")
        assert "ref_wav must be a string, not 5" in snapshot(page)["worker"]["message"]
        assert console.errors == []  # `ref_wav.split` threw in the page before


def test_a_section_cut_mid_audio_is_failed_not_left_playing(browser: Any) -> None:
    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_json({"event": "start", "total": 2, "backend": "rogue", "device": "cpu"})
        await socket.send_json({"event": "progress", "idx": 0, "status": "synth"})
        await socket.send_json(
            {"event": "audio_start", "idx": 0, "sample_rate": 24000, "format": "pcm_s16le"}
        )
        await socket.send_bytes(b"\x00\x40" * 12000)  # 0.5 s of section 0, then the worker is gone
        await asyncio.sleep(0.2)
        await socket.close()
        return socket

    with rogue_page(browser, serving(ws)) as (page, console):
        start_playing(page, ("가.", "나."))
        wait_for(page, "s.run && s.run.running === false && s.run.audioDrained")
        state = snapshot(page)
        assert [s["state"] for s in state["sections"]] == ["failed", "failed"]  # not "playing" for ever
        assert state["figures"]["summary"].startswith("Finished: 0 ok, 2 failed")
        assert state["figures"]["playedSourceSamples"] == 12000  # what came still played
        assert console.errors == []


def test_a_double_click_on_play_sends_one_request(browser: Any) -> None:
    requests: list[str] = []

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        async for message in socket:
            requests.append(message.data)
            await socket.send_json({"event": "start", "total": 1, "backend": "rogue", "device": "cpu"})
            await socket.send_json({"event": "progress", "idx": 0, "status": "ok", "elapsed_sec": 0.0})
            await socket.send_json(
                {"event": "done", "ok_count": 1, "fail_count": 0, "elapsed_total_sec": 0.0}
            )
        return socket

    with rogue_page(browser, serving(ws)) as (page, console):
        wait_for(page, "s.worker.state === 'ready'")
        page.fill("#input", "가.")
        wait_for(page, "s.sections.length === 1")
        page.dblclick("#play")  # the second click lands while the first makes the AudioContext and socket
        wait_for(page, "s.run && s.run.running === false && s.sections[0].state === 'done'")
        page.wait_for_timeout(300)
        assert len(requests) == 1, requests  # two went out: the worker ran one and answered Busy to the other
        assert console.errors == []


def test_what_a_worker_sends_after_done_is_reported_and_ignored(browser: Any) -> None:
    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_json({"event": "start", "total": 1, "backend": "rogue", "device": "cpu"})
        await socket.send_json({"event": "progress", "idx": 0, "status": "ok", "elapsed_sec": 0.0})
        await socket.send_json({"event": "done", "ok_count": 1, "fail_count": 0, "elapsed_total_sec": 0.0})
        # For no request: the audio played and counted as received, the second done rewrote the summary.
        await socket.send_json({"event": "progress", "idx": 0, "status": "synth"})
        await socket.send_json(
            {"event": "audio_start", "idx": 0, "sample_rate": 24000, "format": "pcm_s16le"}
        )
        await socket.send_bytes(b"\x00\x40" * 12000)
        await socket.send_json({"event": "audio_end", "idx": 0, "samples": 12000, "chunks": 1})
        await socket.send_json({"event": "done", "ok_count": 7, "fail_count": 3, "elapsed_total_sec": 9.0})
        await socket.send_json({"event": "error", "idx": None, "error": "Rogue: the end"})
        async for _ in socket:
            pass
        return socket

    with rogue_page(browser, serving(ws)) as (page, console):
        start_playing(page, ("가.",))
        page.wait_for_function("() => document.getElementById('log').textContent.includes('Rogue: the end')")
        page.wait_for_timeout(300)  # the 0.5 s of audio would be playing now
        state, log = snapshot(page), page.text_content("#log") or ""
        assert "an event audio_start came with no request running (ignored)" in log
        assert "an event done came with no request running (ignored)" in log
        assert state["run"]["receivedSamples"] == 0
        assert state["figures"]["playedSourceSamples"] == 0
        assert state["sections"][0]["state"] == "done"
        assert state["figures"]["summary"].startswith("Finished: 1 ok, 0 failed")
        assert console.errors == []


def test_the_log_says_one_section_and_one_chunk_in_the_singular(browser: Any) -> None:
    """A one-slide Play logged "start: 1 sections on …" and "audio_end 0: 1 samples in 1 chunks"."""

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_json({"event": "start", "total": 1, "backend": "rogue", "device": "cpu"})
        await socket.send_json({"event": "progress", "idx": 0, "status": "synth"})
        await socket.send_json(
            {"event": "audio_start", "idx": 0, "sample_rate": 24000, "format": "pcm_s16le"}
        )
        await socket.send_bytes(b"\x00\x40")
        await socket.send_json({"event": "audio_end", "idx": 0, "samples": 1, "chunks": 1})
        await socket.send_json({"event": "progress", "idx": 0, "status": "ok", "elapsed_sec": 0.0})
        await socket.send_json({"event": "done", "ok_count": 1, "fail_count": 0, "elapsed_total_sec": 0.0})
        async for _ in socket:
            pass
        return socket

    with rogue_page(browser, serving(ws)) as (page, console):
        start_playing(page, ("가.",))
        wait_for(page, "s.run && s.run.running === false")
        log = page.text_content("#log") or ""
        assert "start: 1 section on rogue/cpu" in log
        assert "audio_end 0: 1 sample in 1 chunk\n" in log + "\n", log
        assert "sections" not in log and "chunks" not in log
        assert console.errors == []


def test_a_cancel_the_worker_never_answers_is_given_up_and_the_socket_closed(browser: Any) -> None:
    closed = threading.Event()  # set on the rogue's loop, read here

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_json({"event": "start", "total": 1, "backend": "rogue", "device": "cpu"})
        async for _ in socket:  # the cancel, ignored: no `done` ever comes
            pass
        closed.set()
        return socket

    with rogue_page(browser, serving(ws)) as (page, console):
        page.clock.install()
        start_playing(page, ("가.",))
        wait_for(page, "s.run && s.run.started")
        page.click("#cancel")
        wait_on_the_page_clock(page, "s.run.running === false")  # Play stayed disabled for ever
        state = snapshot(page)
        assert [s["state"] for s in state["sections"]] == ["cancelled"]
        assert state["figures"]["summary"].startswith(
            "Cancelled: 0 of 1 played, 0 failed, 1 cancelled; 0 synthesised"
        )
        assert "did not confirm the cancel" in state["message"]
        assert not page.is_disabled("#play")
        assert closed.wait(seconds(5))  # the page closed the socket: the worker's request stops too
        assert console.errors == []


def test_audio_far_ahead_of_playback_is_bounded_and_the_request_cancelled(browser: Any) -> None:
    received: list[str] = []
    minute = b"\x00\x40" * 8000 * 60  # one minute at 8 kHz (the smallest bytes for the bound in minutes)

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_json({"event": "start", "total": 1, "backend": "rogue", "device": "cpu"})
        await socket.send_json({"event": "audio_start", "idx": 0, "sample_rate": 8000, "format": "pcm_s16le"})
        for _ in range(31):  # past the page's 30 minutes ahead, as fast as the socket takes it
            await socket.send_bytes(minute)
        async for message in socket:
            received.append(message.data)
            await socket.send_json({"event": "done", "ok_count": 0, "fail_count": 0, "cancelled": True})
        return socket

    with rogue_page(browser, serving(ws, {**ROGUE_HEALTH, "sample_rate": 8000})) as (page, console):
        start_playing(page, ("가.",))
        wait_for(
            page, "s.run && s.run.running === false && s.figures.bufferedMs < 60000"
        )  # the half hour dropped
        state = snapshot(page)
        assert "30 minutes of audio came ahead of playback" in state["message"]
        assert received == ['{"type":"cancel"}']
        assert state["run"]["cancelled"]
        assert console.errors == []


def test_a_websocket_handshake_that_never_completes_is_reported(browser: Any) -> None:
    async def ws(request: web.Request) -> web.WebSocketResponse:
        await asyncio.sleep(3600)  # accepts the connection, never answers the upgrade
        raise AssertionError("unreachable")

    with rogue_page(browser, serving(ws)) as (page, console):
        page.clock.install()
        start_playing(page, ("가.",))  # waited for ever, saying nothing
        wait_on_the_page_clock(
            page, "s.message.includes('did not complete the WebSocket handshake within 5 s')"
        )
        assert snapshot(page)["run"] is None  # nothing was sent
        assert not page.is_disabled("#play")
        assert console.errors == []
