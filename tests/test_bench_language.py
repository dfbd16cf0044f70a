"""`npu-worker bench --lang` a worker refuses: the run ends at the first refusal, naming the flag (it ran
the whole run with every request refused, then exited 1 with a report of failures)."""

from __future__ import annotations

import asyncio

import pytest

from npu_worker.app_keys import SETTINGS_KEY
from npu_worker.bench.cli import main as bench_main
from tests.test_bench_run import base_of


@pytest.mark.parametrize("transport", ["ws", "http", "fragments"])
async def test_a_language_the_worker_refuses_ends_the_run_at_its_first_refusal(
    worker, tmp_path, capsys, transport
):
    """`--lang zz`: every request of the whole run was sent and refused, then it exited 1 with a report
    of failures; the first refusal now ends it, naming the flag, with no report and no more requests."""
    server = await worker(None)  # espeak-ng: it knows its languages before anything queues
    argv = ["bench", "--base", base_of(server), "--rps", "20", "--duration", "2", "--requests", "40"]
    argv += ["--lang", "zz", "--out", str(tmp_path / "run")]
    if transport == "fragments":  # the stream socket's `session.config` is refused: each text was
        argv += ["--mode", "fragments"]
    else:
        argv += ["--transports", transport, "--wav-dir", str(server.app[SETTINGS_KEY].output_roots[0])]
    code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("npu-worker bench: the worker does not speak --lang zz: UnknownLanguage: "), err
    assert err.count("\n") == 1, err  # no `ws at 20/s: 40 requests, 40 failed` line: the rate was cut short
    assert not list(tmp_path.glob("run*")), "a run refused before it measured anything wrote a report"
