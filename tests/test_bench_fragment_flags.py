"""`bench --mode fragments` refuses a fragment size or pace it cannot send naming the flag and the value
given, before the run, as every other flag's refusal does: it said `fragments need >= 1 character and an
interval of 0-5 s`, in neither flag's name nor unit (the flag takes milliseconds)."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.bench.cli import main as bench_main


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--fragment-chars", "0"], "--fragment-chars must be a whole number >= 1, not 0"),
        (["--fragment-chars", "-3"], "--fragment-chars must be a whole number >= 1, not -3"),
        (["--fragment-interval-ms", "-5"], "--fragment-interval-ms must be in [0, 5000], not -5"),
        (["--fragment-interval-ms", "6000"], "--fragment-interval-ms must be in [0, 5000], not 6000"),
        (["--fragment-interval-ms", "nan"], "--fragment-interval-ms must be in [0, 5000], not nan"),
    ],
)
async def test_a_fragment_flag_out_of_range_is_refused_naming_it(tmp_path, capsys, flags, said):
    argv = ["bench", "--mode", "fragments", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r")]
    assert await asyncio.to_thread(bench_main, [*argv, *flags]) == 2
    err = capsys.readouterr().err
    assert err == f"npu-worker bench: {said}\n", err
    assert not list(tmp_path.iterdir()), "a run refused before it began wrote something"
