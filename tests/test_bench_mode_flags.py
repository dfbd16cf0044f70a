"""A `bench` flag that the chosen `--mode` does not read is refused before the run, naming the flag and
the mode that reads it: `--mode fragments --engine-baseline B` ran without subtracting the engine's
times, `--transports http` still measured the WebSocket route, `--wav-dir` was never looked at, and the
load mode took `--fragment-chars 0`, each without a word (the report then read as what was asked)."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.bench.cli import main as bench_main


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (
            ["--mode", "fragments", "--engine-baseline", "b.json"],
            "--engine-baseline applies to --mode load only",
        ),
        (["--mode", "fragments", "--transports", "http"], "--transports applies to --mode load only"),
        (["--mode", "fragments", "--transports", "both"], "--transports applies to --mode load only"),
        (["--mode", "fragments", "--wav-dir", "/tmp"], "--wav-dir applies to --mode load only"),
        (["--fragment-chars", "0"], "--fragment-chars applies to --mode fragments only"),
        (
            ["--mode", "load", "--fragment-interval-ms", "5"],
            "--fragment-interval-ms applies to --mode fragments",
        ),
    ],
)
async def test_a_flag_the_mode_does_not_read_is_refused_before_the_run(tmp_path, capsys, flags, said):
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), *flags]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: {said}") and err.count("\n") == 1, err
    assert not list(tmp_path.iterdir()), "a run refused before it began wrote something"


@pytest.mark.parametrize(
    "flags",
    [
        ["--mode", "fragments", "--rps", "20", "--duration", "1", "--transports", "ws,http"],
        ["--fragment-chars", "3", "--fragment-interval-ms", "30"],
        # the route fragments mode measures: it was refused as a flag of the load mode
        ["--mode", "fragments", "--transports", "ws"],
        ["--mode", "fragments", "--transports", "ws,ws"],
    ],
)
async def test_the_other_modes_flags_at_their_defaults_pass(tmp_path, capsys, flags):
    """Given at its default, such a flag changes nothing, and the load's pace passes in fragments mode:
    the run goes on (to the absent worker here)."""
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), *flags]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("npu-worker bench: cannot reach http://127.0.0.1:9"), err
