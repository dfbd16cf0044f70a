"""`bench --engine-baseline PATH` that cannot be read, or is too large, is refused naming that flag and
what it should be, before the run (it was `cannot read --texts PATH`, naming a flag the caller never gave,
and a file past the bound was `not a texts file`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from npu_worker.bench.cli import main as bench_main
from npu_worker.bench.texts_file import MAX_TEXTS_BYTES
from tests.bench_support import engine_baseline_argv


def sparse_past_the_bound(path: Path) -> Path:
    with path.open("wb") as sparse:
        sparse.truncate(MAX_TEXTS_BYTES + 1)
    return path


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda tmp: tmp / "missing.json", "cannot read --engine-baseline {path}: No such file or directory"),
        (lambda tmp: tmp, "cannot read --engine-baseline {path}: Is a directory"),
        (
            lambda tmp: sparse_past_the_bound(tmp / "big.json"),
            "{path}: more than 16 MiB: not an engine baseline",
        ),
    ],
)
async def test_an_engine_baseline_that_cannot_be_read_names_its_flag(tmp_path, capsys, make, said):
    path = make(tmp_path)
    argv = engine_baseline_argv(tmp_path, path)
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err == f"npu-worker bench: {said.format(path=path)}\n", err


async def test_a_missing_texts_file_still_names_texts(tmp_path, capsys):
    path = tmp_path / "missing.txt"
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), "--texts", str(path)]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err == f"npu-worker bench: cannot read --texts {path}: No such file or directory\n", err
