"""`npu-worker bench` against a worker that was restarted under the load (its supervisor's `Restart=`, a
crash of the NPU runtime) and is loading again when the run ends: its `/health` answered, so the run was
taken for a clean one, exit 0, and its figures (some of them a crashed worker's) published. The server
here plays that worker: it serves each request, then its `/health` says `loading`, as a restarted one
does until its engine has loaded (minutes for a QNN start)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import numpy as np
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from npu_worker.bench.cli import main as bench_main

HEALTH = {"status": "ok", "loaded": True, "backend": "restarting", "device": "cpu", "queue": 0}
LOADING = {**HEALTH, "status": "loading", "loaded": False, "device": None}
Handler = Callable[[web.Request], Awaitable[web.Response]]
TONE = (np.sin(np.arange(4800) * 2 * np.pi * 440 / 24000) * 8000).astype("<i2").tobytes()  # 0.2 s


def restarting_worker(loaded_again: bool = False) -> web.Application:
    """`loaded_again`: restarted and loaded again by the run's end, `ok` with another `start_id`."""
    served = asyncio.Event()  # a request served: the worker "restarts", loading from then on

    async def health(request: web.Request) -> web.Response:
        if served.is_set() and loaded_again:
            return web.json_response({**HEALTH, "start_id": "2nd"})
        if served.is_set():
            return web.json_response(LOADING, status=503, headers={"Retry-After": "1"})
        return web.json_response({**HEALTH, "start_id": "1st"})

    return worker_answering(health, served)


def worker_answering(health: Handler, served: asyncio.Event) -> web.Application:
    """A worker whose `/health` is `health`; it serves the measured `/ws` requests, `served` set at each."""

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def preview(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.receive()
        await socket.send_str(json.dumps({"event": "audio_start", "sample_rate": 24000}))
        await socket.send_bytes(TONE)
        await socket.send_str(json.dumps({"event": "done"}))
        served.set()
        await socket.close()
        return socket

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/ws", preview)
    return app


async def test_a_worker_loading_again_after_the_run_ends_the_bench_with_exit_1(tmp_path, capsys):
    async with TestServer(restarting_worker(), host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        argv = ["bench", "--base", base, "--rps", "5", "--duration", "1", "--requests", "1"]
        argv += ["--transports", "ws", "--out", str(tmp_path / "run")]
        code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    report = json.loads((tmp_path / "run.json").read_text())  # written all the same, the figures kept
    assert [record["error"] for record in report["records"]] == [None], report["records"]
    assert code == 1, err
    assert err.splitlines()[-1] == (
        "npu-worker bench: the worker's /health said 'loading' after the run, 'ok' before: it may have"
        " restarted or failed under the load; 0 of 1 requests failed"
    ), err
    # the markdown record says it too (it read as a clean run's; `--mode fragments`' record said it)
    record = (tmp_path / "run.md").read_text()
    assert (
        "**Not the figures of a worker that lived through the run**: the worker's /health said 'loading'"
        " after the run, 'ok' before" in record
    ), record


async def test_a_worker_restarted_and_loaded_again_within_the_run_ends_the_bench_with_exit_1(
    tmp_path, capsys
):
    """`ok` before and after the run: a run across a restart (some figures a crashed worker's) read as a
    clean one, exit 0; /health's `start_id` tells the two starts apart."""
    async with TestServer(restarting_worker(loaded_again=True), host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        argv = ["bench", "--base", base, "--rps", "5", "--duration", "1", "--requests", "1"]
        argv += ["--transports", "ws", "--out", str(tmp_path / "run")]
        code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    lost = (
        "the worker's /health named another start after the run ('1st', '2nd'): it restarted under the load"
    )
    assert (code, err.splitlines()[-1]) == (1, f"npu-worker bench: {lost}; 0 of 1 requests failed"), err
    record = (tmp_path / "run.md").read_text()
    assert f"**Not the figures of a worker that lived through the run**: {lost}." in record, record


def balanced_nodes(before: dict[str, str], after: dict[str, str]) -> web.Application:
    """A load balancer in front of cluster nodes, as this server plays it: `/health` is one node's
    (`before`: its `node` and `start_id`) until a request has been served, then `after`'s."""
    served = asyncio.Event()

    async def health(request: web.Request) -> web.Response:
        node = after if served.is_set() else before
        return web.json_response({**HEALTH, "queue_backend": "redis", **node})

    return worker_answering(health, served)


@pytest.mark.parametrize(
    ("after", "restarted"),
    [({"node": "box2-8b01", "start_id": "b1"}, False), ({"node": "box1-3f2a", "start_id": "a2"}, True)],
)
async def test_a_run_through_a_load_balancer_compares_the_start_ids_of_one_node_only(
    tmp_path, capsys, after, restarted
):
    """Behind a balancer the /health before and after the run came from two nodes, each `ok` with its
    own `start_id`: the run was exit 1, "restarted under the load", its figures marked as not those of
    a worker that lived through it. One node's two starts (its name is its state dir's) still are."""
    async with TestServer(
        balanced_nodes({"node": "box1-3f2a", "start_id": "a1"}, after), host="127.0.0.1"
    ) as server:
        base = f"http://127.0.0.1:{server.port}"
        argv = ["bench", "--base", base, "--rps", "5", "--duration", "1", "--requests", "1"]
        argv += ["--transports", "ws", "--out", str(tmp_path / "run")]
        code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    record = (tmp_path / "run.md").read_text()
    assert (code == 1, "restarted under the load" in err) == (restarted, restarted), err
    assert ("Not the figures of a worker that lived through the run" in record) == restarted, record
