"""`npu-worker bench` sent a SIGTERM (or SIGHUP) while its loop ran a request's own code, as a real stop
under load often lands: the command line's handler raised it there, which ended the loop with every other
request's task pending. stderr had `Task was destroyed but it is pending!` by the hundred (or a `Task
exception was never retrieved` traceback), and the run's wav folder was left, its removal never run.
Heard by the loop now, as asyncio.run hears a Ctrl-C: the run is cancelled, each request's `finally` and
the folder's removal run, then it ends as terminated (143)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real `serve` for the runs that check the bench command's own stop (its exit, its words, its
    report), never the worker's, each waiting for the worker to be idle before its first rate
    (`load.wait_idle`). A start per test was ≈ 1.5 s of CPU (the worker and its espeak children) and its
    wait for `/ready`. Not the wav folder's test: a /synth its stop cut may still write into the run's
    folder, so that worker is killed before the folder is looked at."""
    args = ["--state-dir", str(tmp_path_factory.mktemp("state")), "--cache-max-bytes", "0"]
    worker = ServeProcess(args, ENV)
    try:
        yield worker.wait_ready()
    finally:
        worker.kill()
        worker.wait(seconds(30))


# The real console script, stopped from inside its second /synth's task as that request ends (its record
# kept): the instant a stop under load lands on (a kill from outside lands there only some of the time).
STOPPED_IN_A_REQUEST = """
import os, signal, sys
from npu_worker.bench import load
told = load.language_refused
def language_refused(config, record):
    if record.index == 1:
        os.kill(os.getpid(), signal.SIGTERM)
    return told(config, record)
load.language_refused = language_refused
from npu_worker.cli import main
sys.exit(main())
"""


def test_a_stop_inside_a_request_cancels_the_run_and_removes_its_wav_folder(tmp_path):
    wavs = tmp_path / "wavs"
    wavs.mkdir(mode=0o700)
    args = ["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0", "--output-roots", str(wavs)]
    worker = ServeProcess(args, ENV)
    prefix = tmp_path / "run"
    try:
        argv = [sys.executable, "-c", STOPPED_IN_A_REQUEST, "bench", "--base", worker.wait_ready()]
        argv += ["--rps", "20", "--duration", "600", "--requests", "12", "--transports", "http"]
        argv += ["--timeout", str(seconds(30)), "--wav-dir", str(wavs), "--out", str(prefix)]
        done = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=seconds(120))
    finally:
        worker.kill()
        worker.wait(seconds(30))
    assert done.returncode == 143, done.stderr
    assert done.stderr.rstrip().endswith("npu-worker bench: terminated"), done.stderr
    assert "Task was destroyed" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not list(wavs.iterdir())  # the run's own folder removed, as a run that ends removes it
    report = json.loads(prefix.with_suffix(".json").read_text())
    assert report["interrupted"].startswith("Terminated while loading http at 20/s"), report["interrupted"]


# The real console script stopped by a Ctrl-C as it waits for the worker to be idle before its first
# rate: the run has begun (its /health asked), no request has ended.
STOPPED_BEFORE_ANY_ENDED = """
import os, signal, sys
from npu_worker.bench import load
waited = load.wait_idle
async def wait_idle(session, base, limit):
    os.kill(os.getpid(), signal.SIGINT)
    return await waited(session, base, limit)
load.wait_idle = wait_idle
from npu_worker.cli import main
sys.exit(main())
"""


def test_a_stop_before_any_request_ended_writes_nothing_over_an_earlier_report(tmp_path, base):
    """It wrote a report of nothing, `Interrupted while loading : the figures are of the 0 requests`,
    over the earlier run's files at that --out (a run stopped in its first second, its flags wrong)."""
    prefix = tmp_path / "run"
    earlier = {suffix: f"the earlier run's {suffix}" for suffix in (".json", ".md")}
    for suffix, text in earlier.items():
        Path(f"{prefix}{suffix}").write_text(text)
    argv = [sys.executable, "-c", STOPPED_BEFORE_ANY_ENDED, "bench", "--base", base]
    argv += ["--rps", "5", "--duration", "5", "--transports", "ws", "--out", str(prefix)]
    done = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=seconds(120))
    assert done.returncode == 130, done.stderr
    assert done.stderr == "npu-worker bench: interrupted\n", done.stderr
    assert {suffix: Path(f"{prefix}{suffix}").read_text() for suffix in earlier} == earlier
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.json", "run.md"]


# The real console script sent a SIGTERM once its first rate has ended, then a Ctrl-C as its report's
# JSON is written (a second stop, impatient or another tool's).
STOPPED_AGAIN_AS_IT_WRITES = """
import os, signal, sys
from npu_worker.bench import load, report
hint = load.wav_dir_hint
def wav_dir_hint(batch, out_dir):
    os.kill(os.getpid(), signal.SIGTERM)
    return hint(batch, out_dir)
load.wav_dir_hint = wav_dir_hint
write = report.write_file
def write_file(path, data):
    write(path, data)
    if path.suffix == ".json":
        os.kill(os.getpid(), signal.SIGINT)
report.write_file = write_file
from npu_worker.cli import main
sys.exit(main())
"""


def test_a_second_stop_as_the_stopped_runs_report_is_written_leaves_it_whole(tmp_path, base):
    """A Ctrl-C as the report of a run stopped by SIGTERM was written cut it after its JSON: the markdown
    beside it was an earlier run's (or none), and the command said `interrupted`, 130."""
    prefix = tmp_path / "run"
    Path(f"{prefix}.md").write_text("the earlier run's record")
    argv = [sys.executable, "-c", STOPPED_AGAIN_AS_IT_WRITES, "bench", "--base", base]
    argv += ["--rps", "50,0.01", "--duration", "600", "--requests", "3", "--transports", "ws"]
    argv += ["--timeout", str(seconds(30)), "--out", str(prefix)]
    done = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=seconds(120))
    assert done.returncode == 143, done.stderr
    assert done.stderr.rstrip().endswith("npu-worker bench: terminated"), done.stderr
    report = json.loads(prefix.with_suffix(".json").read_text())
    assert report["interrupted"].startswith("Terminated while loading ws at "), report["interrupted"]
    assert [r["rate"] for r in report["records"]] == [50, 50, 50], report["records"]
    assert "**Stopped before its end**: Terminated while loading" in Path(f"{prefix}.md").read_text()


# The real console script stopped by a Ctrl-C as it waits for the worker to be idle before its second
# rate, the first one's requests all ended.
STOPPED_BETWEEN_RATES = """
import os, signal, sys
from npu_worker.bench import load
waited, calls = load.wait_idle, []
async def wait_idle(session, base, limit):
    calls.append(limit)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGINT)
    return await waited(session, base, limit)
load.wait_idle = wait_idle
from npu_worker.cli import main
sys.exit(main())
"""


def test_a_stop_between_two_rates_names_the_rate_to_come_not_the_one_that_ended(tmp_path, base):
    """It said `Interrupted while loading ws at 50/s: … 0 in flight were cut` of a rate whose requests had
    all ended: its row read as one cut short."""
    prefix = tmp_path / "run"
    argv = [sys.executable, "-c", STOPPED_BETWEEN_RATES, "bench", "--base", base]
    argv += ["--rps", "50,0.01", "--duration", "600", "--requests", "3", "--transports", "ws"]
    argv += ["--timeout", str(seconds(30)), "--out", str(prefix)]
    done = subprocess.run(argv, env=ENV, capture_output=True, text=True, timeout=seconds(120))
    assert done.returncode == 130, done.stderr
    report = json.loads(prefix.with_suffix(".json").read_text())
    assert [r["rate"] for r in report["records"]] == [50, 50, 50], report["records"]
    said = (
        "Interrupted while loading ws at 0.01/s (before its first request: waiting for the worker to be idle)"
    )
    assert report["interrupted"].startswith(f"{said}: the figures are of the 3 requests"), report[
        "interrupted"
    ]
