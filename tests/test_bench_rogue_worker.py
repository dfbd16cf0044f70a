"""The benchmark against a worker that is not one (a local user's server on the worker's port): what it
sends is a request's error, never the run's end, and what it names never picks where reports go."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from npu_worker import audio
from npu_worker.bench.cli import main as bench_main
from npu_worker.bench.fragments import FragmentConfig, run_fragments
from npu_worker.bench.load import LoadConfig, run_load
from npu_worker.bench.report import summarize_runs
from tests.timing import seconds

TEXTS = ("첫 번째 문장입니다.", "둘.")
HEALTH = {"status": "ok", "backend": "rogue", "device": "cpu"}

# Each rogue worker answers at once: a request's timeout is never what these tests look for, and a
# loaded machine's event loop must not turn a rogue answer into a timeout.
ANSWERED = seconds(10)


async def rogue_worker(
    health: Any = HEALTH,
    ws_frame: Any = "[1, 2]",
    synth: Any = (1, 2),
    configured: Any = None,
    hang_up: bool = False,
) -> AsyncIterator[str]:
    """/health, /ws (one text frame, then nothing, or a close with `hang_up`), POST /synth and the
    speech stream's session."""

    async def health_route(request: web.Request) -> web.Response:
        return web.Response(text=health if isinstance(health, str) else json.dumps(health))

    async def send(socket: web.WebSocketResponse) -> None:
        for frame in [ws_frame] if isinstance(ws_frame, str) else ws_frame:
            await (socket.send_bytes(frame) if isinstance(frame, bytes) else socket.send_str(frame))

    async def ws_route(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await send(socket)
        await (socket.close() if hang_up else socket.receive())  # or until the client hangs up
        return socket

    async def synth_route(request: web.Request) -> web.Response:
        return web.json_response(synth)

    async def speech_route(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_str(json.dumps(configured or {"type": "session.configured", "sample_rate": 24000}))
        await send(socket)
        await (socket.close() if hang_up else socket.receive())
        return socket

    app = web.Application()
    app.router.add_get("/health", health_route)
    app.router.add_get("/ws", ws_route)
    app.router.add_post("/synth", synth_route)
    app.router.add_get("/v1/audio/speech/stream", speech_route)
    async with TestServer(app, host="127.0.0.1") as server:
        yield f"http://127.0.0.1:{server.port}"


@pytest.mark.parametrize("transport", ["ws", "http"])
async def test_an_answer_that_is_no_json_object_is_that_requests_error(tmp_path, transport: str):
    """A JSON array for an event (/ws) or a /synth answer: AttributeError ended the whole run."""
    async for base in rogue_worker():
        config = LoadConfig(
            base=base,
            rates=(20.0,),
            texts=TEXTS,
            transports=(transport,),
            duration=0.2,
            max_requests=2,
            timeout=ANSWERED,
            wav_dir=str(tmp_path),
        )
        async with asyncio.timeout(seconds(20)):
            result = await run_load(config)
    records = result["records"]
    assert records and all("not a JSON object" in record["error"] for record in records), records


@pytest.mark.parametrize(
    ("frame", "configured"),
    [("not json", None), ("[1]", None), ("{}", {"type": "session.configured", "sample_rate": "fast"})],
    ids=["not-json", "not-an-object", "sample-rate-not-a-number"],
)
async def test_a_speech_stream_event_no_worker_sends_is_that_texts_error(frame: str, configured: Any):
    async for base in rogue_worker(ws_frame=frame, configured=configured):
        config = FragmentConfig(base=base, texts=TEXTS, chars=3, interval=0.01, timeout=ANSWERED)
        async with asyncio.timeout(seconds(20)):
            result = await run_fragments(config, say=lambda line: None)
    assert result["summary"]["errors"] == 2
    assert all(record["error"] for record in result["records"])


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_health_that_is_no_json_object_is_one_line_and_exit_two(tmp_path, capsys, mode: str):
    async for base in rogue_worker(health="<html>not a worker</html>"):
        argv = ["bench", "--base", base, "--mode", mode, "--out", str(tmp_path / "r"), "--requests", "1"]
        code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert code == 2 and err.splitlines()[-1].startswith("npu-worker bench: "), err
    assert "/health did not answer a JSON object" in err


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_the_backend_a_worker_names_never_picks_where_the_report_goes(tmp_path, mode: str):
    """The report's default name starts with /health's `backend`: `/tmp/x` or `../..` put it there."""
    escape = str(tmp_path / "escaped")
    done = {"event": "done"} if mode == "load" else {"type": "session.done", "total_sentences": 0}
    async for base in rogue_worker(health={**HEALTH, "backend": escape}, ws_frame=json.dumps(done)):
        argv = [
            "bench",
            "--base",
            base,
            "--mode",
            mode,
            "--requests",
            "1",
            "--rps",
            "20",
            "--duration",
            "0.2",
        ]
        argv += ["--timeout", "2"] + (["--transports", "ws"] if mode == "load" else [])  # fragments: ws only
        cwd = Path.cwd()
        os.chdir(tmp_path)
        try:
            await asyncio.to_thread(bench_main, argv)
        finally:
            os.chdir(cwd)
    assert not list(tmp_path.glob("escaped*")), "the report was written where the worker said"
    written = list((tmp_path / "benchmarks" / mode).iterdir())
    assert written and all(path.parent == tmp_path / "benchmarks" / mode for path in written)


TONE = (np.sin(np.arange(4800) / 3.0) * 8000).astype("<i2").tobytes()  # 0.2 s, audible at once


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_server_ttfa_that_is_no_number_is_left_out_not_the_end_of_the_run(tmp_path, mode: str):
    """`first_audio.ttfa_ms: "soon"` went into the figures: the summary's TypeError lost the whole run."""
    first = json.dumps({"event": "first_audio", "type": "first_audio", "ttfa_ms": "soon"})
    done = json.dumps({"event": "done"} if mode == "load" else {"type": "session.done", "total_sentences": 1})
    async for base in rogue_worker(ws_frame=[TONE, first, done]):
        if mode == "load":
            config = LoadConfig(
                base=base, rates=(20.0,), texts=TEXTS, transports=("ws",), duration=0.2, max_requests=1,
                timeout=ANSWERED,
            )  # fmt: skip
            async with asyncio.timeout(seconds(20)):
                records = (await run_load(config))["records"]
            [row] = summarize_runs(records)
            assert row["ok"] == 1 and row["metrics"]["server_ttfa_ms"]["n"] == 0
        else:
            fragments = FragmentConfig(base=base, texts=TEXTS[:1], chars=3, interval=0.01, timeout=ANSWERED)
            async with asyncio.timeout(seconds(20)):
                result = await run_fragments(fragments, say=lambda line: None)
            assert result["summary"]["errors"] == 0 and result["summary"]["server_ttfa_ms"]["n"] == 0


@pytest.mark.parametrize("transport", ["ws", "http", "fragments"])
async def test_a_redirect_is_never_followed_off_to_another_target(tmp_path, transport: str):
    """Targets are loopback only, but a redirect (the /ws handshake's too) took the load wherever it
    pointed; each request now ends with its error, and the other target sees nothing."""
    seen: list[str] = []

    async def elsewhere(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.json_response({})

    other = web.Application()
    other.router.add_route("*", "/{tail:.*}", elsewhere)
    async with TestServer(other, host="127.0.0.1") as target:
        away = f"http://localhost:{target.port}/elsewhere"

        async def redirect(request: web.Request) -> web.Response:
            raise web.HTTPTemporaryRedirect(away)

        async def health(request: web.Request) -> web.Response:
            return web.json_response(HEALTH)

        app = web.Application()
        app.router.add_get("/health", health)
        for path in ("/ws", "/synth", "/v1/audio/speech/stream"):
            app.router.add_route("*", path, redirect)
        async with TestServer(app, host="127.0.0.1") as server, asyncio.timeout(seconds(20)):
            base = f"http://127.0.0.1:{server.port}"
            if transport == "fragments":
                config = FragmentConfig(base=base, texts=TEXTS, chars=3, interval=0.01, timeout=ANSWERED)
                records = (await run_fragments(config, say=lambda line: None))["records"]
            else:
                load = LoadConfig(
                    base=base, rates=(20.0,), texts=TEXTS, transports=(transport,), duration=0.2,
                    max_requests=2, timeout=ANSWERED, wav_dir=str(tmp_path),
                )  # fmt: skip
                records = (await run_load(load))["records"]
    assert records and all("not followed" in record["error"] for record in records), records
    assert seen == []


async def test_a_first_sentence_that_is_no_text_is_left_out_not_the_end_of_the_run():
    """`sentence_text: [1]` reached str.find when the figures were made: a TypeError ended the run."""
    start = json.dumps({"type": "audio.start", "sentence_index": 0, "sentence_text": [1]})
    done = json.dumps({"type": "session.done", "total_sentences": 1})
    async for base in rogue_worker(ws_frame=[start, TONE, done]):
        fragments = FragmentConfig(base=base, texts=TEXTS[:1], chars=3, interval=0.01, timeout=ANSWERED)
        async with asyncio.timeout(seconds(20)):
            result = await run_fragments(fragments, say=lambda line: None)
    [record] = result["records"]
    assert record["error"] is None and record["first_sentence"] is None and record["audio_sec"] > 0
    assert record["ttfa_from_sentence_ms"] is None  # was measured from the last fragment (-1 % fragments)
    assert record["ttfa_from_first_fragment_ms"] is not None


TONE = (np.sin(np.arange(4800) * 2 * np.pi * 440 / 24000) * 8000).astype("<i2").tobytes()  # 0.2 s


async def test_a_worker_that_hangs_up_mid_stream_is_that_requests_error_not_a_success(tmp_path):
    """A close after some PCM, with no `done`: counted ok, its cut audio in the percentiles."""
    start = json.dumps({"event": "audio_start", "sample_rate": 24000})
    async for base in rogue_worker(ws_frame=[start, TONE], hang_up=True):
        config = LoadConfig(
            base=base,
            rates=(20.0,),
            texts=TEXTS,
            transports=("ws",),
            duration=0.2,
            max_requests=2,
            timeout=ANSWERED,
        )
        async with asyncio.timeout(seconds(20)):
            result = await run_load(config)
    records = result["records"]
    assert records and all("socket closed before done" in str(r["error"]) for r in records), records
    (row,) = summarize_runs(records)
    assert row["errors"] == row["sent"] and row["ok"] == 0


async def test_a_speech_stream_the_worker_hangs_up_is_that_texts_error_not_a_success():
    async for base in rogue_worker(ws_frame=[TONE], hang_up=True):
        config = FragmentConfig(base=base, texts=TEXTS, chars=3, interval=0.01, timeout=ANSWERED)
        async with asyncio.timeout(seconds(20)):
            result = await run_fragments(config, say=lambda line: None)
    assert result["summary"]["errors"] == 2, result["records"]
    assert all("before session.done" in str(r["error"]) for r in result["records"])


async def test_a_worker_that_stops_answering_mid_run_leaves_the_requests_measured_so_far(tmp_path, capsys):
    """/health failing after the run began (a worker that died under the load) ended the run with exit 2
    and no report: every request measured so far was lost."""
    asked = []

    async def health_route(request: web.Request) -> web.Response:
        asked.append(1)
        if len(asked) > 1:  # after the run's first look: the connection drops, as a dead worker's would
            assert request.transport is not None
            request.transport.close()
        return web.json_response(HEALTH)

    async def synth_route(request: web.Request) -> web.Response:
        return web.json_response({"status": "error", "error": "EngineError: gone"}, status=500)

    app = web.Application()
    app.router.add_get("/health", health_route)
    app.router.add_post("/synth", synth_route)
    async with TestServer(app, host="127.0.0.1") as server:
        argv = ["bench", "--base", f"http://127.0.0.1:{server.port}", "--rps", "20,40", "--duration", "0.1"]
        argv += ["--requests", "1", "--transports", "http", "--out", str(tmp_path / "r")]
        code = await asyncio.wait_for(asyncio.to_thread(bench_main, argv), seconds(30))
    err = capsys.readouterr().err
    assert code == 1 and "warning: worker unreachable (ServerDisconnectedError" in err, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert [r["rate"] for r in report["records"]] == [20.0, 40.0], report["records"]
    assert report["health_after"]["unreachable"].startswith("ServerDisconnectedError")
    assert "**The worker could not be reached after the run**" in (tmp_path / "r.md").read_text()


async def test_arrivals_are_open_loop_a_request_is_sent_while_the_ones_before_it_wait():
    """The worker answers no request before all three have arrived: a load generator that waited for an
    answer before the next send (coordinated omission) would see every request time out."""
    arrived: list[int] = []
    all_in = asyncio.Event()

    async def health_route(request: web.Request) -> web.Response:
        return web.json_response(HEALTH)

    async def ws_route(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        arrived.append(1)
        if len(arrived) == 3:
            all_in.set()
        await all_in.wait()
        await socket.send_str(json.dumps({"event": "audio_start", "sample_rate": 24000}))
        await socket.send_bytes(TONE)
        await socket.send_str(json.dumps({"event": "done"}))
        await socket.receive()
        return socket

    app = web.Application()
    app.router.add_get("/health", health_route)
    app.router.add_get("/ws", ws_route)
    async with TestServer(app, host="127.0.0.1") as server:
        config = LoadConfig(
            base=f"http://127.0.0.1:{server.port}",
            rates=(20.0,),
            texts=TEXTS,
            transports=("ws",),
            duration=5.0,
            max_requests=3,
            timeout=seconds(10),
        )
        result = await asyncio.wait_for(run_load(config), seconds(30))
    records = result["records"]
    assert len(records) == 3 and all(r["error"] is None for r in records), records
    assert all(r["ttfa_ms"] is not None for r in records)


async def test_an_error_event_with_an_empty_message_is_still_an_error():
    """`{"event": "error", "error": ""}`: the record's error was "", which the summary counted as a success."""
    async for base in rogue_worker(ws_frame=json.dumps({"event": "error", "error": ""})):
        config = LoadConfig(
            base=base,
            rates=(20.0,),
            texts=TEXTS,
            transports=("ws",),
            duration=0.2,
            max_requests=2,
            timeout=ANSWERED,
        )
        async with asyncio.timeout(seconds(20)):
            result = await run_load(config)
    (row,) = summarize_runs(result["records"])
    assert row["sent"] >= 1 and row["errors"] == row["sent"] and row["ok"] == 0, result["records"]


async def test_a_streamed_text_is_not_kept_whole_its_onset_found_as_it_comes(monkeypatch):
    """Every frame was kept and the whole stream analysed at its end: a worker streaming PCM until the
    timeout (600 s) filled the memory. The onset rule now reads only up to the onset."""
    read: list[int] = []
    window_levels = audio.window_levels_db

    def counting(samples: np.ndarray, *args: Any) -> np.ndarray:
        read.append(np.asarray(samples).size)
        return window_levels(samples, *args)

    monkeypatch.setattr(audio, "window_levels_db", counting)
    done = json.dumps({"type": "session.done", "total_sentences": 1})
    async for base in rogue_worker(ws_frame=[*[TONE] * 300, done]):  # 60 s of tone
        config = FragmentConfig(base=base, texts=TEXTS[:1], chars=3, interval=0.0, timeout=seconds(20))
        async with asyncio.timeout(seconds(30)):
            result = await run_fragments(config, say=lambda line: None)
    [record] = result["records"]
    assert record["error"] is None and record["audio_sec"] == 60.0 and record["ttfa_from_first_fragment_ms"]
    assert sum(read) < 4 * 24000, sum(read)  # a few frames around the onset, not 60 s
