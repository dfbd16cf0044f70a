"""`./~name` names a file or folder `~name` in the current folder, as in a shell (`~name` alone is a
home): made a `Path`, the flag lost its `./` before `~` was expanded, so `synth -o ./~x.wav` was
refused, "no home directory for . on this machine", and `bench --texts ./~t.json` likewise."""

from __future__ import annotations

import asyncio
import wave

from npu_worker.bench.cli import main as bench_main
from npu_worker.cli_client import main as client_main
from tests.test_cli_client import base_of, write_lecture


async def test_synth_and_batch_write_under_a_name_beginning_with_a_tilde_here(
    worker, tmp_path, capsys, monkeypatch
):
    server = await worker()
    monkeypatch.chdir(tmp_path)
    synth = ["synth", "안녕하세요", "-o", "./~x.wav", "--base", base_of(server)]
    assert await asyncio.to_thread(client_main, synth) == 0, capsys.readouterr().err
    lecture = write_lecture(tmp_path / "l.json", ["첫 번째."])
    batch = ["batch", str(lecture), "--out-dir", "./~out", "--base", base_of(server)]
    assert await asyncio.to_thread(client_main, batch) == 0, capsys.readouterr().err
    for made in (tmp_path / "~x.wav", tmp_path / "~out" / "s00.wav"):
        with wave.open(str(made)) as wav:
            assert wav.getnframes() > 0


async def test_bench_reads_a_texts_file_whose_name_begins_with_a_tilde_here(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~t.json").write_text('[{"text": "  "}]')  # refused once read: the run stops there
    argv = ["bench", "--base", "http://127.0.0.1:9", "--texts", "./~t.json"]
    assert await asyncio.to_thread(bench_main, argv) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.endswith("~t.json: item 0 is blank: every text must have something to speak"), said
