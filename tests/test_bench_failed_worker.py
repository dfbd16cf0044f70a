"""`npu-worker bench` against a worker whose engine failed to load, one whose errors carry line breaks, and
`--mode fragments` against one lost under its run:
- a `/health` answering 500 `fail` was taken as healthy: the whole run sent, every request refused, exit 1;
- the closing "no request succeeded (…; first error)" line printed the worker's line breaks as they are
  (forged lines of the bench's own on stderr) and all of a long error;
- `--mode fragments` asked no `/health` after its run: a worker that died or restarted under it ended the
  run with exit 1 (a text failed) or 0 and no line saying so.
Each server here is a real aiohttp server on a loopback port playing that worker."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from npu_worker.bench.cli import main as bench_main

HEALTH = {"status": "ok", "loaded": True, "backend": "test", "device": "cpu", "queue": 0}
FAILED = {
    "status": "fail",
    "loaded": False,
    "backend": "zipvoice",
    "device": None,
    "queue": 0,
    "error": "ModelLoadError: cannot open /models/fp32.onnx\nnpu-worker bench: written: /tmp/r.json"
    + "y" * 2000,
}
TONE = (np.sin(np.arange(4800) * 2 * np.pi * 440 / 24000) * 8000).astype("<i2").tobytes()  # 0.2 s


def argv_of(base: str, mode: str, out: str) -> list[str]:
    argv = ["bench", "--mode", mode, "--base", base, "--requests", "1", "--out", out]
    return argv + (["--rps", "5", "--duration", "1", "--transports", "ws"] if mode == "load" else [])


REDIS_DOWN = {
    **HEALTH,
    "status": "fail",
    "redis": "unreachable",
    "error": "QueueUnavailable: Redis is unreachable",
}


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_worker_whose_health_says_fail_is_refused_before_the_run(tmp_path, capsys, mode):
    sent = []

    async def health(request: web.Request) -> web.Response:
        return web.json_response(FAILED, status=500)

    async def anything(request: web.Request) -> web.Response:
        sent.append(request.path)
        return web.json_response({"error": "ModelLoadError: not loaded"}, status=500)

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_route("*", "/{tail:.+}", anything)
    async with TestServer(app, host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        code = await asyncio.to_thread(bench_main, argv_of(base, mode, str(tmp_path / "r")))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(
        f"npu-worker bench: {base}/health says the worker cannot serve (status 'fail'): ModelLoadError: cannot"
        " open /models/fp32.onnx␤npu-worker bench: written: /tmp/r.jsonyyy"
    ), err
    assert err.endswith("y: every request would fail; see its log\n"), err
    assert err.count("\n") == 1 and len(err) < 500, err
    assert sent == [], "requests were sent to a worker that failed to load"
    assert not list(tmp_path.glob("r*")), "a run refused before it began wrote something"


async def test_a_node_whose_queue_is_unreachable_is_refused_before_the_run(tmp_path, capsys):
    """A cluster node whose Redis is down answers /health 503 `fail`: it takes no request either."""

    async def health(request: web.Request) -> web.Response:
        return web.json_response(REDIS_DOWN, status=503, headers={"Retry-After": "1"})

    app = web.Application()
    app.router.add_get("/health", health)
    async with TestServer(app, host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        code = await asyncio.to_thread(bench_main, argv_of(base, "load", str(tmp_path / "r")))
    assert (code, capsys.readouterr().err) == (
        2,
        f"npu-worker bench: {base}/health says the worker cannot serve (status 'fail'): QueueUnavailable: Redis"
        " is unreachable: every request would fail; see its log\n",
    )


async def test_the_no_request_succeeded_line_is_one_bounded_escaped_line(tmp_path, capsys):
    forged = "Busy\nnpu-worker bench: written: /tmp/r.json\x1b]0;owned\x07" + "z" * 5000

    async def health(request: web.Request) -> web.Response:
        return web.json_response(HEALTH)

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def refusing(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_str(json.dumps({"event": "error", "error": forged}))
        await socket.close()
        return socket

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/ws", refusing)
    async with TestServer(app, host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        code = await asyncio.to_thread(bench_main, argv_of(base, "load", str(tmp_path / "r")))
    err = capsys.readouterr().err
    assert code == 1, err
    last = err.splitlines()[-1]
    assert last.startswith(
        "npu-worker bench: no request succeeded (1 sent; Busy␤npu-worker bench: written: /tmp/r.json"
        "\\x1b]0;owned\\x07zzz"
    ), err
    assert last.endswith("z)") and len(last) < 500, last
    assert "\nnpu-worker bench: written: /tmp/r.json" not in err, err


def streaming_worker(after_the_text: str) -> web.Application:
    """A worker that streams one text, then is gone (`gone`: its /health connection cut) or restarting
    (`loading`: its /health a 503 `loading`, as a worker restarted by its supervisor answers)."""
    served = asyncio.Event()

    async def health(request: web.Request) -> web.StreamResponse:
        if not served.is_set():
            return web.json_response(HEALTH)
        if after_the_text == "loading":
            return web.json_response({**HEALTH, "status": "loading", "loaded": False}, status=503)
        assert request.transport is not None
        request.transport.close()  # a worker that died: the connection ends with no answer
        return web.Response()

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def stream(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()  # session.config
        await socket.send_str(json.dumps({"type": "session.configured", "sample_rate": 24000}))
        async for message in socket:
            if json.loads(message.data).get("type") == "input.done":
                break
        await socket.send_str(json.dumps({"type": "audio.start", "sentence_index": 0, "sentence_text": "a"}))
        await socket.send_bytes(TONE)
        await socket.send_str(json.dumps({"type": "session.done", "total_sentences": 1}))
        served.set()
        await socket.close()
        return socket

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/v1/audio/speech/stream", stream)
    return app


@pytest.mark.parametrize("after_the_text", ["gone", "loading"])
async def test_fragments_mode_says_when_the_worker_was_lost_under_its_run(tmp_path, capsys, after_the_text):
    async with TestServer(streaming_worker(after_the_text), host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        code = await asyncio.to_thread(bench_main, argv_of(base, "fragments", str(tmp_path / "r")))
    err = capsys.readouterr().err
    report = json.loads((tmp_path / "r.json").read_text())  # written all the same, the figures kept
    # the record says so too, as the load mode's does (it read as a clean run's)
    record = (tmp_path / "r.md").read_text()
    assert "**Not the figures of a worker that lived through the run**: the worker" in record, record
    assert ("could not be reached" if after_the_text == "gone" else "said 'loading'") in record, record
    assert [record["error"] for record in report["records"]] == [None], report["records"]
    assert code == 1, err
    last = err.splitlines()[-1]
    if after_the_text == "gone":
        assert "unreachable" in report["health_after"], report["health_after"]
        assert last.startswith("npu-worker bench: the worker could not be reached after the run ("), err
        assert last.endswith("it may have died under the load; 0 of 1 requests failed"), err
    else:
        assert report["health_after"]["status"] == "loading", report["health_after"]
        assert last == (
            "npu-worker bench: the worker's /health said 'loading' after the run, 'ok' before: it may have"
            " restarted or failed under the load; 0 of 1 requests failed"
        ), err
