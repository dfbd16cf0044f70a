"""`bench --base http://127.0.0.1:PORT/x` (a path after the worker's address): its `/health` answered 404
with the worker's JSON error body, which was taken as the worker's health, so the whole run was sent
(by default four rates on two transports, 20 s each), every request a 404, and it ended with exit 1.
Now refused before the run, exit 2, naming the 404 and what `--base` takes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

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
