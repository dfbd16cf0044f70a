"""A `bench --rps` rate under which no request arrives within `--duration` (its seeded Poisson arrivals
all fall past the end) is refused before the run: `--rps 0.01,2 --duration 3` ran, the 0.01 row was left
out of the report with no word but a stderr line among the progress, and the run exited 0; `--rps 1e-9`
wrote a report of nothing."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.bench.cli import main as bench_main


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--rps", "0.01,2", "--duration", "3"], "--rps 0.01: no request arrives within --duration 3 s"),
        (["--rps", "1e-9"], "--rps 1e-09: no request arrives within --duration 20 s (--seed 1)"),
        (["--rps", "0.5,0.001,0.002", "--seed", "7"], "--rps 0.001, 0.002: no request arrives within"),
    ],
)
async def test_a_rate_that_sends_nothing_is_refused_before_the_run(tmp_path, capsys, flags, said):
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), *flags]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: {said}") and err.count("\n") == 1, err
    assert err.endswith(": raise --duration or the rate\n"), err
    assert not list(tmp_path.iterdir()), "a run refused before it began wrote something"


async def test_a_slow_rate_whose_first_arrival_is_within_the_duration_runs(tmp_path, capsys):
    """0.5/s over 20 s (seed 1) has arrivals: the run goes on, here to the absent worker."""
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), "--rps", "0.5"]
    assert await asyncio.to_thread(bench_main, argv) == 2
    assert capsys.readouterr().err.startswith("npu-worker bench: cannot reach http://127.0.0.1:9"), "ran"
