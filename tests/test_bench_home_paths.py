"""`bench`'s paths expand `~` as `synth` and `batch` do: a shell leaves `--wav-dir=~/w` (or a quoted
`~`) as written, and bench read `--texts ~/t.json` as a folder named `~` in the caller's folder, and
made one for `--wav-dir`; a home no account has is argparse's refusal, exit 2, nothing made."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.bench.cli import main as bench_main


async def test_a_texts_file_under_the_home_is_read_there(tmp_path, capsys, monkeypatch):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    (home / "t.json").write_text('[{"text": "  "}]')  # refused once read: the run stops there
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    argv = ["bench", "--base", "http://127.0.0.1:9", "--texts", "~/t.json"]
    assert await asyncio.to_thread(bench_main, argv) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        said
        == f"npu-worker bench: {home / 't.json'}: item 0 is blank: every text must have something to speak"
    )
    assert not list(elsewhere.iterdir())


@pytest.mark.parametrize("flag", ["--wav-dir", "--out", "--texts", "--engine-baseline"])
async def test_a_home_no_account_has_is_refused_in_the_flags_words(tmp_path, capsys, monkeypatch, flag):
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "--base", "http://127.0.0.1:9", flag, "~nosuchuser-npu/w"]
    with pytest.raises(SystemExit) as refused:
        await asyncio.to_thread(bench_main, argv)
    assert refused.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    expected = f"argument {flag}: ~nosuchuser-npu/w: no home directory for ~nosuchuser-npu on this machine"
    assert said.endswith(expected), said
    assert not list(tmp_path.iterdir()), "a refused run made a folder named ~nosuchuser-npu"
