"""`npu-worker bench --transports both`: its help said "ws, http or both" and its refusal "takes ws,
http or both, not 'both'", yet `both` was refused before the run (exit 2). It now loads both paths."""

from __future__ import annotations

import asyncio
import json

from npu_worker.bench.cli import main as bench_main
from tests.test_bench_run import base_of


async def test_both_runs_each_transport_once(worker, settings, tmp_path, capsys):
    server = await worker()
    argv = ["bench", "--base", base_of(server), "--rps", "20", "--duration", "1", "--requests", "2"]
    argv += ["--wav-dir", settings.output_roots[0], "--out", str(tmp_path / "run")]
    for given in ("both", "both,ws", " ws , http "):
        code = await asyncio.to_thread(bench_main, [*argv, "--transports", given])
        err = capsys.readouterr().err
        assert code == 0, (given, err)
        report = json.loads((tmp_path / "run.json").read_text())
        assert report["config"]["transports"] == ["ws", "http"], given
