"""A `--texts` JSON with a blank text is refused before the run, naming the item: the load mode sent it
and every such request failed (`EmptyText`), and `--mode fragments` streamed nothing, measured nothing
and exited 0 with a report of empty figures, as if it had succeeded."""

from __future__ import annotations

import asyncio
import json

import pytest

from npu_worker.bench.cli import main as bench_main


@pytest.mark.parametrize("mode", ["load", "fragments"])
@pytest.mark.parametrize("texts", [["", "  "], {"sections": [{"text": "하나."}, {"text": "\n\t"}]}])
async def test_a_blank_text_is_refused_before_the_run(tmp_path, capsys, mode, texts):
    path = tmp_path / "texts.json"
    path.write_text(json.dumps(texts), encoding="utf-8")
    argv = ["bench", "--mode", mode, "--base", "http://127.0.0.1:9", "--texts", str(path)]
    assert await asyncio.to_thread(bench_main, [*argv, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    item = 0 if isinstance(texts, list) else 1
    said = f"npu-worker bench: {path}: item {item} is blank: every text must have something to speak\n"
    assert err == said, err
    assert not list(tmp_path.glob("r*")), "a run refused before it began wrote a report"
