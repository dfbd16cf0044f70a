"""`npu-worker bench` stopped midway (Ctrl-C, SIGTERM) against a real worker: it said `interrupted` and
wrote nothing, the requests of a run of minutes lost with the rest. Now the report of what had ended is
written, marked as stopped, and the command still ends as a stopped one (130, 143)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]
CONSOLE_SCRIPT = "import sys; from npu_worker.cli import main; sys.exit(main())"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real `serve` for the module's stopped benches: what they check is the bench command's report
    and exit, never the worker's; a start per test was ≈ 1.5 s of CPU (the worker and its espeak
    children) and its wait for `/ready`."""
    args = ["--state-dir", str(tmp_path_factory.mktemp("state")), "--cache-max-bytes", "0"]
    worker = ServeProcess(args, ENV)
    try:
        yield worker.wait_ready()
    finally:
        worker.kill()
        worker.wait(seconds(30))


def stopped_bench(base: str, prefix: Path, env: dict[str, str], signum: int) -> tuple[int, str]:
    """A bench whose first rate (5 requests at 50/s) is measured and whose second (one request in 100 s)
    has barely begun, sent `signum` once the first rate's line is out; its exit status and stderr."""
    argv = [sys.executable, "-c", CONSOLE_SCRIPT, "bench", "--base", base, "--rps", "50,0.01"]
    argv += ["--duration", "600", "--requests", "5", "--transports", "ws", "--seed", "1"]
    argv += ["--timeout", str(seconds(30)), "--out", str(prefix)]
    bench = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert bench.stderr is not None
    said = []
    try:
        for line in bench.stderr:
            said.append(line)
            if line.startswith("ws at 50/s: "):
                break
        bench.send_signal(signum)
        said.append(bench.stderr.read())
        return bench.wait(seconds(60)), "".join(said)
    finally:
        bench.kill()
        bench.wait(seconds(30))


def test_a_bench_stopped_midway_writes_what_it_measured_and_ends_as_stopped(tmp_path, base):
    for signum, word, status in (
        (signal.SIGINT, "interrupted", 130),
        (signal.SIGTERM, "terminated", 143),
    ):
        prefix = tmp_path / word
        code, said = stopped_bench(base, prefix, ENV, signum)
        assert code == status, said
        assert said.rstrip().endswith(f"npu-worker bench: {word}"), said
        assert "Traceback" not in said, said
        report = json.loads(prefix.with_suffix(".json").read_text())
        first = [r for r in report["records"] if r["rate"] == 50]
        assert len(first) == 5 and all(r["error"] is None for r in first), report["records"]
        assert report["summary"][0]["ok"] == 5, report["summary"]
        assert report["interrupted"].startswith(f"{word.capitalize()} while loading ws at "), report
        assert report["health_after"] is None, report["health_after"]
        record = prefix.with_suffix(".md").read_text()
        assert f"**Stopped before its end**: {word.capitalize()} while loading" in record, record


def test_a_fragments_run_stopped_midway_writes_the_texts_it_measured(tmp_path, base):
    prefix = tmp_path / "f"
    # the lecture's 39 texts, 3 characters every 30 ms: each takes seconds, the run a minute
    argv = [sys.executable, "-c", CONSOLE_SCRIPT, "bench", "--mode", "fragments", "--base"]
    argv += [base, "--timeout", str(seconds(30)), "--out", str(prefix)]
    bench = subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert bench.stderr is not None
    said = []
    try:
        for line in bench.stderr:  # the first text measured, the second being sent
            said.append(line)
            if line.startswith("text 0: "):
                break
        bench.send_signal(signal.SIGINT)
        said.append(bench.stderr.read())
        code = bench.wait(seconds(60))
    finally:
        bench.kill()
        bench.wait(seconds(30))
    told = "".join(said)
    assert code == 130 and told.rstrip().endswith("npu-worker bench: interrupted"), told
    assert "Traceback" not in told, told
    report = json.loads(prefix.with_suffix(".json").read_text())
    assert report["records"] and report["records"][0]["error"] is None, report["records"]
    assert report["interrupted"].startswith("Interrupted while sending text "), report
    assert report["interrupted"].endswith(f"{len(report['records'])} texts that had ended, of 39"), report
    assert report["health_after"] is None, report["health_after"]
    record = prefix.with_suffix(".md").read_text()
    assert "**Stopped before its end**: Interrupted while sending text " in record, record
