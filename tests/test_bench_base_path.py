"""`bench --base http://127.0.0.1:PORT/x` (a path after the worker's address): its `/health` answered 404
with the worker's JSON error body, which was taken as the worker's health, so the whole run was sent
(by default four rates on two transports, 20 s each), every request a 404, and it ended with exit 1.
Now refused before the run, exit 2, naming the 404 and what `--base` takes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from npu_worker.bench.cli import main as bench_main


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_base_whose_health_is_a_404_is_refused_before_the_run(worker, tmp_path, capsys, mode):
    server = await worker()
    out = tmp_path / "reports" / "r"
    argv = ["bench", "--mode", mode, "--base", base_of(server) + "/x", "--out", str(out)]
    argv += ["--requests", "1"] + (["--rps", "5", "--duration", "1"] if mode == "load" else [])
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"npu-worker bench: {base_of(server)}/x/health answered HTTP 404: BadRequest: no such endpoint: GET"
        " /x/health: is a worker listening there? --base takes the worker's address alone, http://HOST:PORT\n"
    ), err
    assert not list(tmp_path.glob("reports/r*")), "a run refused before it began wrote something"


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_base_whose_health_is_a_405_is_refused_before_the_run(worker, tmp_path, capsys, mode):
    """`--base …/jobs` (a job's URL cut short): `GET /jobs/health` is the worker's 405 (the route takes a
    DELETE), whose JSON error body was taken as its health, as the 404 was: the whole run sent, each
    request a 405, then exit 1."""
    server = await worker()
    out = tmp_path / "reports" / "r"
    argv = ["bench", "--mode", mode, "--base", base_of(server) + "/jobs", "--out", str(out)]
    argv += ["--requests", "1"] + (["--rps", "5", "--duration", "1"] if mode == "load" else [])
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"npu-worker bench: {base_of(server)}/jobs/health answered HTTP 405: BadRequest: GET is not allowed"
    ) and err.endswith(
        ": is a worker listening there? --base takes the worker's address alone, http://HOST:PORT\n"
    )
    assert err.count("\n") == 1, err
    assert not list(tmp_path.glob("reports/r*")), "a run refused before it began wrote something"


async def test_a_servers_404_words_are_one_bounded_escaped_line(tmp_path, capsys):
    """Another server on the port chose the words of its 404: its line breaks forged lines of the bench's
    own on stderr (here a `written:` line for reports never written), and all of its body was one line."""
    forged = "x\nnpu-worker bench: written: /tmp/r.json\x1b]0;owned\x07" + "y" * 5000

    async def health_route(request: web.Request) -> web.Response:
        return web.json_response({"error": forged}, status=404)

    app = web.Application()
    app.router.add_get("/health", health_route)
    async with TestServer(app, host="127.0.0.1") as server:
        base = f"http://127.0.0.1:{server.port}"
        argv = ["bench", "--base", base, "--out", str(tmp_path / "r"), "--rps", "5", "--duration", "1"]
        assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"npu-worker bench: {base}/health answered HTTP 404: x␤npu-worker bench: written: /tmp/r.json"
        "\\x1b]0;owned\\x07yyy"
    ), err
    assert err.count("\n") == 1 and len(err) < 600, err
