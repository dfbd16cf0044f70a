"""The benchmark end to end against a live worker: figures that hang together, reports on disk."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from npu_worker.app_keys import SETTINGS_KEY
from npu_worker.bench.cli import main as bench_main
from npu_worker.bench.load import LanguageRefused, LoadConfig, run_load
from npu_worker.bench.report import markdown, summarize_runs, write_report
from npu_worker.bench.texts_file import DEFAULT_TEXTS, load_texts, read_baseline, texts_digest
from tests.bench_support import engine_baseline_argv
from tests.timing import seconds
from tests.tone_engine import ToneEngine

TEXTS = ("첫 번째 문장입니다.", "두 번째 문장은 조금 더 깁니다.", "셋.")


def base_of(test_client: Any) -> str:
    return f"http://127.0.0.1:{test_client.port}"


async def bench(server: Any, **overrides: Any) -> dict[str, Any]:
    wav_dir = server.app[SETTINGS_KEY].output_roots[0]  # the test worker allows only its tmp_path
    settings = {
        "base": base_of(server),
        "rates": (4.0,),
        "texts": TEXTS,
        "duration": 1.0,
        "max_requests": 3,
        "wav_dir": wav_dir,
    }
    async with asyncio.timeout(seconds(60)):
        return await run_load(LoadConfig(**{**settings, **overrides}))


def ok_records(result: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    records = [r for r in result["records"] if r["transport"] == transport]
    assert records and all(r["error"] is None for r in records), records
    return records


async def test_websocket_figures_follow_the_order_a_listener_hears_them(worker):
    result = await bench(await worker(), transports=("ws",))
    for r in ok_records(result, "ws"):
        assert r["sched_lag_ms"] >= 0
        assert r["ttfb_ms"] <= r["first_chunk_ms"] <= r["ttfa_ms"] <= r["e2e_ms"] + 1000 * r["audio_sec"]
        assert r["audio_sec"] > 0 and r["rtf"] > 0 and r["chunks"] >= 1
        assert r["server_ttfa_ms"] is not None


async def test_a_whole_wav_is_heard_after_its_leading_silence(worker):
    result = await bench(await worker(ToneEngine(leading_silence=0.3)), transports=("http",))
    for r in ok_records(result, "http"):
        assert r["first_chunk_ms"] == pytest.approx(r["e2e_ms"])
        assert r["ttfa_ms"] == pytest.approx(r["first_chunk_ms"] + r["leading_silence_ms"])
        assert r["underruns"] == 0


async def test_a_stream_slower_than_real_time_underruns(worker):
    slow = ToneEngine(seconds_per_char=0.05, chunk_seconds=0.05, delay_per_chunk=0.1)  # half real time
    result = await bench(await worker(slow), transports=("ws",), rates=(1.0,), max_requests=1, duration=5.0)
    [record] = ok_records(result, "ws")
    assert record["underruns"] > 0 and record["underrun_ms"] > 0
    assert record["rtf"] > 1.0


async def test_a_stream_faster_than_real_time_plays_without_underruns(worker):
    # All the audio is made at once; a first chunk of 0.5 s (not the default 40 ms) leaves the later chunks half
    # a second to arrive, so a busy machine (two test workers on two cores) cannot make a gap that is not there.
    # 0.3 s a character: the texts' 0.6-5.1 s arrive in several chunks, so there are gaps to count.
    engine = ToneEngine(seconds_per_char=0.3)
    result = await bench(await worker(engine, chunk_schedule_ms=(500.0, 1000.0)), transports=("ws",))
    records = ok_records(result, "ws")
    assert all(r["underruns"] == 0 for r in records), records


async def test_a_request_over_its_timeout_is_counted_not_waited_for(worker):
    stuck = ToneEngine()
    stuck.gate = held = threading.Event()  # no chunk until the test ends (a 5 s delay per chunk was
    try:  # waited out again by the worker's stop)
        result = await bench(await worker(stuck), transports=("ws",), max_requests=1, timeout=0.3)
    finally:
        held.set()
    [row] = summarize_runs(result["records"])
    assert row["timeouts"] == 1 and row["errors"] == 1 and row["ok"] == 0


async def test_reports_hold_percentiles_per_rate_and_the_engine(worker, tmp_path):
    result = await bench(await worker(), rates=(2.0, 4.0))
    report = {
        "command": "npu-worker bench --rps 2,4",
        "started_at": "s",
        "finished_at": "f",
        "machine": {"platform": "p", "cpu_count": 2, "note": "shared"},
        "health": result["health"],
        "summary": summarize_runs(result["records"]),
        "records": result["records"],
    }
    assert [(r["transport"], r["rate"]) for r in report["summary"]] == [
        ("ws", 2.0),
        ("http", 2.0),
        ("ws", 4.0),
        ("http", 4.0),
    ]
    paths = await asyncio.to_thread(write_report, report, tmp_path / "run")
    assert json.loads(paths[0].read_text())["summary"][0]["metrics"]["ttfa_ms"]["n"] >= 1
    text = markdown(report)
    assert "## WebSocket /ws" in text and "## HTTP /synth" in text and "tone on cpu" in text
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_the_bench_command_writes_its_files_and_records_its_command_line(worker, tmp_path, capsys):
    server = await worker()
    texts = tmp_path / "texts.txt"
    texts.write_text("하나.\n둘입니다.\n", encoding="utf-8")
    argv = [
        "bench",
        "--base",
        base_of(server),
        "--rps",
        "3",
        "--duration",
        "1",
        "--requests",
        "2",
        "--texts",
        str(texts),
        "--out",
        str(tmp_path / "r"),
        "--note",
        "test",
    ]
    assert await asyncio.to_thread(bench_main, argv) == 0
    recorded = json.loads((tmp_path / "r.json").read_text())
    assert recorded["command"].startswith("npu-worker bench --base")
    assert recorded["health"]["backend"] == "tone" and recorded["config"]["rates"] == [3.0]
    assert (tmp_path / "r.md").exists() and (tmp_path / "r.png").exists()
    assert "TTFA" in capsys.readouterr().out


async def test_without_matplotlib_the_bench_writes_json_and_markdown_and_says_how_to_plot(
    worker, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as in an install without the [bench] extra
    server = await worker()
    argv = ["bench", "--base", base_of(server), "--rps", "3", "--duration", "1", "--requests", "1"]
    argv += ["--out", str(tmp_path / "r")]
    assert await asyncio.to_thread(bench_main, argv) == 0
    assert (tmp_path / "r.json").exists() and (tmp_path / "r.md").exists()
    assert not (tmp_path / "r.png").exists()
    assert "pip install '.[bench]' in the npu-worker checkout" in capsys.readouterr().err


async def test_the_bench_command_refuses_a_remote_target(tmp_path, capsys):
    code = await asyncio.to_thread(
        bench_main, ["bench", "--base", "http://192.0.2.1:7768", "--out", str(tmp_path / "x")]
    )
    assert code == 2 and "only loopback" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


async def test_an_output_that_cannot_be_written_is_refused_before_the_run(worker, tmp_path, capsys):
    """`--out /proc/nope/x` failed with a traceback only after the whole run; now nothing is sent."""
    server = await worker()
    (tmp_path / "afile").write_text("not a folder")
    argv = ["bench", "--base", base_of(server), "--rps", "3", "--duration", "1", "--requests", "1"]
    for out in (tmp_path / "afile" / "r", tmp_path / "d"):
        (tmp_path / "d.md").mkdir(exist_ok=True)  # for `d`: its .md cannot be written over
        code = await asyncio.to_thread(bench_main, [*argv, "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith(f"npu-worker bench: cannot write the results to {out}.*: "), err
        assert err.count("\n") == 1  # no "ws at 3/s: ..." line: the run never began


async def test_a_run_in_which_no_request_succeeded_exits_1_with_its_report(worker, tmp_path, capsys):
    """`--wav-dir` outside the worker's output roots: every /synth is refused; that exited 0."""
    server = await worker()
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"  # beside tmp_path, the worker's only root
    elsewhere.mkdir()
    argv = ["bench", "--base", base_of(server), "--rps", "3", "--duration", "1", "--requests", "2"]
    argv += ["--transports", "http", "--wav-dir", str(elsewhere), "--out", str(tmp_path / "run.v2")]
    code = await asyncio.to_thread(bench_main, argv)
    err = capsys.readouterr().err
    assert code == 1 and "npu-worker bench: no request succeeded (2 sent; " in err, err
    recorded = json.loads((tmp_path / "run.v2.json").read_text())  # kept, and `.v2` with it
    assert [r["error"] is not None for r in recorded["records"]] == [True, True]


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (["--timeout", "0"], "--timeout must be in (0, 600.0] s"),
        (["--timeout", "nan"], "--timeout must be in (0, 600.0] s"),
        # These named the bench's own fields (`max_requests must be ...`, `transports must be among
        # ('ws', 'http'), got ('wss',)`), not the flags a caller gives.
        (["--requests", "0"], "--requests must be in (0, 1000]"),
        (["--duration", "0"], "--duration must be in (0, 600.0] s"),
        (["--rps", "0"], "--rps must be in (0, 50.0] requests/s"),
        (["--rps", "1,2,1"], "--rps: each rate once, not 1, 2, 1"),
        (["--transports", "wss"], "--transports takes ws, http or both, not 'wss'"),
        (["--token", "a\nb"], "the token must be printable ASCII"),
        (
            ["--wav-dir", "/proc/nonexistent-npu-worker"],
            "cannot write in --wav-dir /proc/nonexistent-npu-worker: ",
        ),
        (["--mode", "fragments", "--timeout", "0"], "--timeout must be in (0, 600] s"),
        (["--mode", "fragments", "--requests", "-5"], "--requests must be in (0, 1000]"),  # all but 5
        (["--mode", "fragments", "--base", "http://u:p@127.0.0.1:9"], "the worker URL must not hold a user"),
        (["--texts", "/dev/zero"], "/dev/zero: more than 16 MiB: not a texts file"),  # read until OOM
        (["--texts", "/nonexistent-npu-worker"], "cannot read --texts /nonexistent-npu-worker: No such file"),
        (["--mode", "fragments", "--texts", "/nonexistent-npu-worker"], "cannot read --texts /nonexistent"),
        (["--mode", "fragments", "--texts", "/dev/zero"], "/dev/zero: more than 16 MiB"),
    ],
)
async def test_settings_every_request_would_fail_on_are_refused_before_the_run(
    tmp_path, capsys, flags, problem
):
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), *flags]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    err = "".join(line for line in err.splitlines(True) if "warning: --token was given" not in line)
    assert err.startswith(f"npu-worker bench: {problem}") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[" * 100_000, "the JSON is nested too deeply to read"),  # a RecursionError's traceback
        ('[{"title": "no text"}]', "item 0 is neither a text nor a section with a string 'text'"),  # KeyError
        ('{"sections": 5}', "expected a list of texts, or an object with 'sections'"),  # TypeError
        ("[[[1]]]", "item 0 is neither a text nor a section"),  # was sent as the text "[[1]]"
    ],
)
@pytest.mark.parametrize("mode", ["load", "fragments"])
async def test_a_texts_file_that_holds_no_texts_is_one_line(tmp_path, capsys, content, problem, mode):
    texts = tmp_path / "texts.json"
    texts.write_text(content, encoding="utf-8")
    argv = ["bench", "--mode", mode, "--texts", str(texts), "--base", "http://127.0.0.1:9"]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: {texts}: {problem}") and err.count("\n") == 1, err


async def test_a_request_the_worker_refuses_is_its_error_not_a_timeout(worker):
    """A /ws refusal is an `error` without idx and no `done`: it was waited on until the timeout."""
    with pytest.raises(LanguageRefused, match=r"^the worker does not speak --lang xx: UnknownLanguage: "):
        await bench(await worker(None), transports=("ws",), lang="xx", timeout=10.0)


def report_of(result: dict) -> dict:
    """The report `npu-worker bench` writes, around one run's records."""
    return {
        "command": "npu-worker bench",
        "started_at": "s",
        "finished_at": "f",
        "machine": {"platform": "p", "cpu_count": 2},
        "health": result["health"],
        "summary": summarize_runs(result["records"]),
    }


async def test_requests_without_an_audible_onset_are_named_in_the_markdown_not_left_out(worker, tmp_path):
    """Silence only: no TTFA to count, and the table's TTFA columns were silently over the other requests."""
    result = await bench(await worker(ToneEngine(seconds_per_char=0.0, leading_silence=0.3)))
    records = result["records"]
    assert records and all(r["error"] is None and r["ttfa_ms"] is None for r in records), records
    report = report_of(result)
    text = markdown(report)
    for row in report["summary"]:
        assert row["no_onset"] == row["ok"] > 0
        assert f"{row['no_onset']} of {row['ok']} successful requests had no audible onset" in text, text


async def test_a_rerun_the_cache_answers_is_named_in_the_markdown(worker):
    """The same --seed again, the worker's cache on: every /synth figure was the cache's, and only the JSON
    said so (a /ws preview is not kept in the cache: its figures stay the engine's)."""
    server = await worker(cache_max_bytes=10_000_000)
    await bench(server)
    result = await bench(server)
    records = result["records"]
    assert records and all(r["error"] is None and r["cached"] == (r["transport"] == "http") for r in records)
    report = report_of(result)
    text = markdown(report)
    [row] = [row for row in report["summary"] if row["transport"] == "http"]
    assert f"{row['ok']} of {row['ok']} successful requests were answered from the worker's cache" in text, (
        text
    )
    assert text.count("answered from the worker's cache") == 1


LECTURE_BASELINE = str(Path(__file__).parents[1] / "benchmarks/load/espeak-engine.json")  # the lecture's 39


@pytest.mark.parametrize(
    ("baseline", "texts", "problem"),
    [
        ("[1, 2]", None, "not an engine baseline"),  # AttributeError's traceback after the whole run
        ("[" * 100_000, None, "the JSON is nested too deeply to read"),
        (LECTURE_BASELINE, "하나.\n둘.\n", "a baseline of 39 texts; this run has 2"),  # silently wrong
        (
            '{"per_text_first_audible_ms": [1, 2], "per_text_whole_ms": [1, 2], "texts_sha256": "0"}',
            "a\nb\n",
            "a baseline of other texts than this run's --texts",
        ),
        ('{"per_text_first_audible_ms": ["1", 2], "per_text_whole_ms": [1, 2]}', "a\nb\n", "no number"),
    ],
)
async def test_an_engine_baseline_of_other_texts_or_none_is_refused_before_the_run(
    tmp_path, capsys, baseline: str, texts: str | None, problem: str
):
    path = Path(baseline) if baseline == LECTURE_BASELINE else tmp_path / "baseline.json"
    if path != Path(baseline):
        path.write_text(baseline, encoding="utf-8")
    argv = engine_baseline_argv(tmp_path, path)
    if texts is not None:
        (tmp_path / "texts.txt").write_text(texts, encoding="utf-8")
        argv += ["--texts", str(tmp_path / "texts.txt")]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: {path}: ") and problem in err and err.count("\n") == 1, err


def test_an_engine_baseline_of_the_same_texts_is_taken(tmp_path):
    texts = ("하나.", "둘.")
    path = tmp_path / "baseline.json"
    recorded = {"per_text_first_audible_ms": [1.5, None], "per_text_whole_ms": [3, 4]}
    path.write_text(json.dumps({**recorded, "texts_sha256": texts_digest(texts)}), encoding="utf-8")
    assert read_baseline(path, texts)["per_text_whole_ms"] == [3, 4]
    assert len(read_baseline(Path(LECTURE_BASELINE), load_texts(DEFAULT_TEXTS)[0])["per_text_whole_ms"]) == 39


async def test_a_relative_wav_dir_is_the_callers_not_the_workers(worker, tmp_path, monkeypatch):
    """`--wav-dir out` went to the worker as a relative output_path, which names no folder of the caller's."""
    server = await worker()
    monkeypatch.chdir(tmp_path.parent)
    result = await bench(server, transports=("http",), wav_dir=tmp_path.name)
    assert all(r["ttfa_ms"] is not None for r in ok_records(result, "http"))


async def test_a_refused_wav_folder_tells_the_caller_to_pass_wav_dir(worker):
    """A worker whose --output-roots leave out the temp folder refused every /synth with its own advice,
    start the worker with --output-roots: the benchmark's caller was not told of its --wav-dir."""
    said: list[str] = []
    server = await worker()
    config = LoadConfig(
        base=base_of(server), rates=(4.0,), texts=TEXTS, duration=0.5, max_requests=1, transports=("http",)
    )
    async with asyncio.timeout(seconds(60)):
        result = await run_load(config, say=said.append)
    assert all(r["error"].startswith("OutputPathNotAllowed") for r in result["records"])
    assert any("--wav-dir" in line for line in said), said


@pytest.mark.parametrize("mode", ["load", "fragments"])
@pytest.mark.parametrize(
    ("token", "problem"), [("wrong-token-0000000", "check the token"), (None, "--token-file")]
)
async def test_a_token_the_worker_refuses_is_said_before_the_run(
    worker, tmp_path, capsys, monkeypatch, mode, token, problem
):
    """A wrong or missing token: every request failed (401) through the whole run, exit 1, and the /ws
    ones said only `WSServerHandshakeError: 401, message='Invalid response status'`; now one line, exit 2."""
    server = await worker(token="walk5-the-right-token")
    monkeypatch.delenv("NPU_WORKER_TOKEN", raising=False)
    argv = ["bench", "--mode", mode, "--base", base_of(server), "--rps", "3", "--duration", "1"]
    argv += ["--requests", "1", "--out", str(tmp_path / "r")]
    if token is not None:
        (tmp_path / "tok").write_text(token + "\n")
        (tmp_path / "tok").chmod(0o600)
        argv += ["--token-file", str(tmp_path / "tok")]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: {base_of(server)} refused the bench (HTTP 401): "), err
    assert problem in err and err.count("\n") == 1, err
    assert not (tmp_path / "r.json").exists()


async def test_a_missing_wav_dir_is_made(tmp_path, capsys):
    """`--wav-dir DIR` that did not exist was refused (`No such file or directory`): it is made, as
    `mkdir -p` would, for its user only; the run then goes on (to a worker that is not there)."""
    wavs = tmp_path / "runs" / "wavs"
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), "--wav-dir", str(wavs)]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("npu-worker bench: cannot reach http://127.0.0.1:9"), err
    assert wavs.is_dir() and wavs.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("planted", ["file", "dangling link", "another user's link"])
async def test_a_wav_dir_that_is_no_folder_is_refused_clearly(tmp_path, capsys, planted):
    """A path that is there and no folder, or a link another user left at its name (as one planted in
    /tmp), is refused in words; nothing is made through a link."""
    wavs, target = tmp_path / "wavs", tmp_path / "elsewhere"
    if planted == "file":
        wavs.write_bytes(b"")
        said = f"--wav-dir {wavs} is no folder"
    else:
        wavs.symlink_to(target)
        said = f"--wav-dir {wavs} is a link to nothing"
    if planted == "another user's link":
        if os.geteuid() != 0:
            pytest.skip("giving a link to another user needs root")
        os.lchown(wavs, 65534, -1)
        target.mkdir()
        said = f"--wav-dir {wavs} is a link another user (uid 65534) owns"
    argv = ["bench", "--base", "http://127.0.0.1:9", "--out", str(tmp_path / "r"), "--wav-dir", str(wavs)]
    assert await asyncio.to_thread(bench_main, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker bench: {said}") and err.count("\n") == 1, err
    assert planted == "another user's link" or not target.exists()
