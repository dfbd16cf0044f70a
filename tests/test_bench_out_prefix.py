"""`bench --out` names a prefix of files; a folder given there (`runs/`, `.`, `..`) is refused before the
run: the reports went beside it (`--out runs/` wrote runs.json, runs.md and runs.png next to the folder,
`--out .` the hidden `..json` in the caller's folder)."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.bench.cli import main as bench_main


async def refused_in(folder, capsys, monkeypatch, mode: str, out: str) -> str:
    """Run `bench --out OUT` from `folder`, assert argparse refused it (exit 2), and return what it said."""
    monkeypatch.chdir(folder)
    argv = ["bench", "--mode", mode, "--base", "http://127.0.0.1:9", "--out", out]
    with pytest.raises(SystemExit) as refused:
        await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert refused.value.code == 2, err
    return err


@pytest.mark.parametrize("mode", ["load", "fragments"])
@pytest.mark.parametrize("out", ["runs/", ".", "..", "runs/.."])
async def test_a_folder_as_out_is_refused_before_the_run(tmp_path, capsys, monkeypatch, mode, out):
    (tmp_path / "runs").mkdir()
    err = await refused_in(tmp_path, capsys, monkeypatch, mode, out)
    said = f"npu-worker bench: error: argument --out: {out!r} is a folder: --out takes a prefix of files"
    assert err.splitlines()[-1].startswith(said), err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["runs"], "a refused run wrote a report"


@pytest.mark.parametrize("mode", ["load", "fragments"])
@pytest.mark.parametrize("out", ["runs", "link"])
async def test_an_existing_folder_without_its_slash_is_refused(tmp_path, capsys, monkeypatch, mode, out):
    """`--out runs` where runs/ (or a link to a folder) exists wrote runs.json, .md and .png beside it."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "runs")
    err = await refused_in(tmp_path, capsys, monkeypatch, mode, out)
    said = (
        f"argument --out: {out!r} is a folder: --out takes a prefix of files, as {out}/run for {out}/run.json"
    )
    assert err.splitlines()[-1] == f"npu-worker bench: error: {said}", err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["link", "runs"], "a refused run wrote a report"


async def test_a_prefix_beside_a_folder_of_its_name_with_a_suffix_passes(tmp_path, capsys, monkeypatch):
    """Only the name itself is looked at: `--out runs` beside a folder `runs.d` goes on (to the absent worker)."""
    (tmp_path / "runs.d").mkdir()
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", "runs"]
    assert await asyncio.to_thread(bench_main, argv) == 2
    assert capsys.readouterr().err.startswith("npu-worker bench: cannot reach http://127.0.0.1:9")


async def test_an_empty_out_is_said_to_be_empty(tmp_path, capsys, monkeypatch):
    """`--out ''` was told "'' is a folder"."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as refused:
        await asyncio.to_thread(bench_main, ["bench", "--base", "http://127.0.0.1:9", "--out", ""])
    assert refused.value.code == 2
    said = "npu-worker bench: error: argument --out: '' is empty: --out takes a prefix of files"
    assert capsys.readouterr().err.splitlines()[-1].startswith(said)
    assert not list(tmp_path.iterdir())
