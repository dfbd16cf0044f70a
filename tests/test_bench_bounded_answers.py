"""The benchmark reads a worker's JSON answers (/health, a /synth answer) up to 1 MiB after decompression:
a server on the target port that sends an endless body, or a gzip body of a few KiB that inflates to
many MiB, ends the run with a line (or is that request's error) instead of filling the bench's memory."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from npu_worker.bench.bounded_body import MAX_ANSWER_BYTES
from npu_worker.bench.cli import main as bench_main
from npu_worker.bench.load import LoadConfig, NotAWorker, health, run_load
from tests.timing import seconds

HEALTH = {"status": "ok", "backend": "rogue", "device": "cpu"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def inflating_object(status: str = "ok", size: int = 8 * MAX_ANSWER_BYTES) -> web.Response:
    """A JSON object of `size` bytes (spaces inside it) sent gzip: a few KiB on the wire, valid JSON."""
    padded = b'{"status": "%s"' % status.encode() + b" " * size + b', "backend": "rogue"}'
    body = gzip.compress(padded)
    assert len(body) < 64 << 10  # the wire carries a fraction of what the bench must not keep
    return web.Response(body=body, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})


async def endless(request: web.Request) -> web.StreamResponse:
    """A body that never ends: `{`, 64 MiB of spaces (a test must not fill this machine's memory either,
    when the bench reads on), then nothing more, the body still open."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b"{")
    for _ in range(64 * 16):
        await response.write(b" " * (64 << 10))
    await asyncio.Event().wait()
    return response


async def serving(health_route: Handler, synth_route: Handler | None = None) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_get("/health", health_route)
    if synth_route is not None:
        app.router.add_post("/synth", synth_route)
    async with TestServer(app, host="127.0.0.1") as server:
        yield f"http://127.0.0.1:{server.port}"


async def gzip_health(request: web.Request) -> web.Response:
    return inflating_object()


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_gzip_bomb_health_is_one_line_and_exit_two(tmp_path, capsys, mode: str):
    """8 MiB of valid JSON inflated from a few KiB: read whole, and the run went on against it."""
    async for base in serving(gzip_health):
        argv = ["bench", "--base", base, "--mode", mode, "--out", str(tmp_path / "r"), "--requests", "1"]
        code = await asyncio.wait_for(asyncio.to_thread(bench_main, argv), seconds(60))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines()[-1] == (
        f"npu-worker bench: {base}/health answered a body over {MAX_ANSWER_BYTES} bytes (decompressed): "
        "read no further: is a worker listening there?"
    ), err


async def test_an_endless_health_is_refused_at_the_bound():
    """A /health that never ends: read (and kept) for ever."""
    async for base in serving(endless):
        async with aiohttp.ClientSession() as session:
            with pytest.raises(NotAWorker, match=f"over {MAX_ANSWER_BYTES} bytes"):
                await asyncio.wait_for(health(session, base), seconds(30))


async def test_a_gzip_bomb_synth_answer_is_that_requests_error(tmp_path):
    async def plain_health(request: web.Request) -> web.Response:
        return web.json_response(HEALTH)

    async def synth(request: web.Request) -> web.Response:
        return inflating_object()

    async for base in serving(plain_health, synth):
        config = LoadConfig(
            base=base,
            rates=(20.0,),
            texts=("첫 번째 문장입니다.",),
            transports=("http",),
            duration=0.1,
            max_requests=1,
            timeout=seconds(30),
            wav_dir=str(tmp_path),
        )
        result = await asyncio.wait_for(run_load(config), seconds(60))
    (record,) = result["records"]
    assert record["error"] == (
        f"AnswerTooLarge: POST /synth answered a body over {MAX_ANSWER_BYTES} bytes (decompressed): "
        "read no further"
    ), json.dumps(record)
