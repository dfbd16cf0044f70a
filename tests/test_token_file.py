"""A token that no other local user sees: `--token-file` (a file, or `-` for stdin) for the client
commands and the benchmark, and a benchmark report that never records the token given as `--token`."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from npu_worker.bench.cli import main as bench_main
from npu_worker.cli_client import main as client_main

TOKEN = "a-token-of-some-length-0123456789"


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


def synth_argv(server: Any, tmp_path: Path) -> list[str]:
    return ["synth", "안녕하세요", "-o", str(tmp_path / "a.wav"), "--base", base_of(server)]


def bench_argv(server: Any, tmp_path: Path) -> list[str]:
    argv = ["bench", "--base", base_of(server), "--rps", "3", "--duration", "1", "--requests", "1"]
    return [*argv, "--transports", "http", "--wav-dir", str(tmp_path), "--out", str(tmp_path / "r")]


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NPU_WORKER_TOKEN", raising=False)


async def test_synth_reads_its_token_from_a_file_and_warns_of_nothing(worker, tmp_path, capsys):
    server = await worker(token=TOKEN)
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n", encoding="utf-8")  # as `echo` or an editor leaves it
    code = await asyncio.to_thread(client_main, [*synth_argv(server, tmp_path), "--token-file", str(secret)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (tmp_path / "a.wav").exists() and "warning" not in err


async def test_synth_reads_its_token_from_standard_input(worker, tmp_path, capsys, monkeypatch):
    server = await worker(token=TOKEN)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TOKEN.encode())))
    code = await asyncio.to_thread(client_main, [*synth_argv(server, tmp_path), "--token-file", "-"])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read --token-file {path}: No such file or directory"),
        ("\n", "--token-file {path} holds no token"),
        ("x" * 5000, "--token-file {path} holds more than 4096 bytes: not a token"),
    ],
)
def test_a_token_file_that_holds_no_token_is_one_line_and_exit_two(tmp_path, capsys, content, problem):
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    argv = ["synth", "x", "-o", str(tmp_path / "a.wav"), "--base", "http://127.0.0.1:9"]
    assert client_main([*argv, "--token-file", str(path)]) == 2
    assert capsys.readouterr().err == f"npu-worker synth: {problem.format(path=path)}\n"


def test_a_token_and_a_token_file_together_are_refused(tmp_path, capsys):
    argv = ["synth", "x", "-o", str(tmp_path / "a.wav"), "--token", TOKEN, "--token-file", "-"]
    with pytest.raises(SystemExit) as stop:
        client_main(argv)
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


async def test_the_bench_reads_its_token_from_a_file(worker, tmp_path, capsys):
    server = await worker(token=TOKEN)
    secret = tmp_path / "token"
    secret.write_text(TOKEN, encoding="utf-8")
    code = await asyncio.to_thread(bench_main, [*bench_argv(server, tmp_path), "--token-file", str(secret)])
    assert code == 0, capsys.readouterr().err
    recorded = json.loads((tmp_path / "r.json").read_text())
    assert [record["error"] for record in recorded["records"]] == [None]


@pytest.mark.parametrize("given", [["--token", TOKEN], [f"--token={TOKEN}"]])
async def test_the_bench_report_never_records_a_token_given_as_a_flag(worker, tmp_path, capsys, given):
    """The report's command line is published with its figures (benchmarks/): it held the token."""
    server = await worker(token=TOKEN)
    code = await asyncio.to_thread(bench_main, [*bench_argv(server, tmp_path), *given])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "npu-worker bench: warning: --token was given on the command line" in err
    for report in (tmp_path / "r.json", tmp_path / "r.md"):
        text = report.read_text(encoding="utf-8")
        assert TOKEN not in text and "<hidden>" in text, report
