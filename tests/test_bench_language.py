"""`npu-worker bench --lang` a worker refuses: the run ends at the first refusal, naming the flag (it ran
the whole run with every request refused, then exited 1 with a report of failures)."""

from __future__ import annotations

import asyncio
import json

import pytest

from npu_worker.app_keys import SETTINGS_KEY
from npu_worker.bench.cli import main as bench_main
from tests.test_bench_run import base_of
from tests.tone_engine import ToneEngine


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


async def test_a_refused_language_from_the_texts_file_is_named_as_the_file_s(worker, tmp_path, capsys):
    """No `--lang`, the texts file's `lang` refused: it said "the worker does not speak --lang zz" to a
    caller who passed no --lang; it now names the file and the flag that picks another."""
    server = await worker(None)
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps({"lang": "zz", "sections": [{"text": "하나."}, {"text": "둘."}]}))
    argv = ["bench", "--base", base_of(server), "--rps", "20", "--duration", "1", "--requests", "4"]
    argv += ["--texts", str(texts), "--mode", "fragments", "--out", str(tmp_path / "run")]
    code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert code == 2, err
    said = f'npu-worker bench: the worker does not speak zz (the "lang" of {texts}; --lang picks another): '
    assert err.startswith(said + "UnknownLanguage: "), err


async def test_a_busy_worker_s_refusals_are_no_language_refusal(worker, tmp_path, capsys):
    """A worker whose queue is full answers `QueueFull` (429 on /synth, an `error` on /ws): those requests
    fail and are counted, the run goes on to its report; only `UnknownLanguage` ends it."""
    server = await worker(ToneEngine(delay_per_chunk=0.05), max_queue=1)
    argv = ["bench", "--base", base_of(server), "--rps", "40", "--duration", "1", "--requests", "12"]
    argv += ["--transports", "ws", "--timeout", "30", "--out", str(tmp_path / "run")]
    code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert code in (0, 1) and "does not speak" not in err, err
    records = json.loads((tmp_path / "run.json").read_text())["records"]
    assert len(records) == 12, records
    assert any((r["error"] or "").startswith("QueueFull") for r in records), records
