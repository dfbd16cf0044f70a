"""`npu-worker bench --lang` a worker refuses: the run ends at the first refusal, naming the flag (it ran
the whole run with every request refused, then exited 1 with a report of failures)."""

from __future__ import annotations

import asyncio
import json

import pytest

from npu_worker.app_keys import SETTINGS_KEY
from npu_worker.bench.cli import main as bench_main
from npu_worker.config import Settings
from tests.test_bench_run import base_of
from tests.tone_engine import ToneEngine


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """espeak-ng on the engine thread (`--no-espeak-process`): bench reads the worker's languages and its
    refusals, the same either way, and the child each worker started (its own interpreter, numpy, the
    Korean reader) was most of these tests' CPU. The child's own tests are tests/test_espeak_*.py."""
    return settings.replace(espeak_process=False)


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


@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_language_health_does_not_list_is_refused_before_any_request(worker, tmp_path, capsys, mode):
    """/health listed no languages, so `bench --lang zz` learnt the worker's refusal only from its first
    request. /health now lists the engine's (`languages`) and the bench refuses before it sends one: the
    worker counts no `UnknownLanguage` answer."""
    server = await worker(None)  # espeak-ng
    health = await (await server.get("/health")).json()
    assert {"ko", "en", "en-us", "korean", "ja"} <= set(health["languages"]), health
    argv = ["bench", "--mode", mode, "--base", base_of(server), "--rps", "20", "--duration", "1"]
    argv += ["--requests", "4", "--lang", "zz", "--out", str(tmp_path / "run")]
    code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert code == 2, err
    said = "npu-worker bench: the worker does not speak --lang zz: UnknownLanguage: its /health lists the"
    assert err.startswith(said) and err.count("\n") == 1, err
    metrics = await (await server.get("/metrics")).text()
    assert 'name="UnknownLanguage"' not in metrics, metrics


@pytest.mark.parametrize(
    "lang", ["ko", " KO_kr ", "ko-KR", "Korean", "en-US", "German", "gmw/en-US", "English (America)"]
)
async def test_a_spelling_the_worker_speaks_is_not_refused_from_health(worker, tmp_path, lang):
    """The bench's check spells `lang` as the worker does (case, `_`, a region whose language is listed,
    an espeak-ng voice's name or identifier: `bench --lang german` said the worker did not speak German):
    none of these is refused before the run, and the worker speaks each."""
    from npu_worker.bench.load import unspoken

    server = await worker(None)
    health = await (await server.get("/health")).json()
    assert unspoken(lang, health) is None
    answer = await server.post(
        "/synth", json={"text": "안녕.", "lang": lang, "output_path": str(tmp_path / "a.wav")}
    )
    assert answer.status == 200, (lang, await answer.text())


async def test_an_engine_that_takes_any_language_lists_none(worker):
    """A ToneEngine (as sovits, or ZipVoice's `simple` tokenizer) has no list: the field is absent, and
    the bench leaves the answer to the run."""
    from npu_worker.bench.load import unspoken

    server = await worker()
    health = await (await server.get("/health")).json()
    assert "languages" not in health and unspoken("zz", health) is None


def test_a_hostile_health_list_is_said_bounded_and_escaped():
    """The refusal printed 20 of the worker's entries as they came: one of 1 MB went to the caller's
    terminal whole, and an escape sequence as one. Each is cut at 64 characters and escaped."""
    from npu_worker.bench.load import unspoken

    refused = unspoken("zz", {"languages": ["\x1b[2J" + "x" * 1_000_000, *(f"l{i}" for i in range(30))]})
    assert refused is not None
    said = str(refused)
    assert len(said) < 1000 and "\x1b" not in said and "\\x1b[2J" in said, said[:200]
    assert said.endswith("l18, … (31 in all)"), said[-80:]
