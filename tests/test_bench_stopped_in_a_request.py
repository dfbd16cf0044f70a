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
from pathlib import Path

from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]
# The real console script, its third /synth stopping the bench from inside that request's task: the
# instant a stop under load lands on (a kill from outside lands there only some of the time).
STOPPED_IN_A_REQUEST = """
import os, signal, sys
from npu_worker.bench import load
sent = load.http_request
async def http_request(session, base, text, params, record, t0, out_dir):
    if record.index == 2:
        os.kill(os.getpid(), signal.SIGTERM)
    return await sent(session, base, text, params, record, t0, out_dir)
load.http_request = http_request
from npu_worker.cli import main
sys.exit(main())
"""


def test_a_stop_inside_a_request_cancels_the_run_and_removes_its_wav_folder(tmp_path):
    wavs = tmp_path / "wavs"
    wavs.mkdir(mode=0o700)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = ["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0", "--output-roots", str(wavs)]
    worker = ServeProcess(args, env)
    prefix = tmp_path / "run"
    try:
        argv = [sys.executable, "-c", STOPPED_IN_A_REQUEST, "bench", "--base", worker.wait_ready()]
        argv += ["--rps", "20", "--duration", "600", "--requests", "12", "--transports", "http"]
        argv += ["--timeout", str(seconds(30)), "--wav-dir", str(wavs), "--out", str(prefix)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=seconds(120))
    finally:
        worker.kill()
        worker.wait(seconds(30))
    assert done.returncode == 143, done.stderr
    assert done.stderr.rstrip().endswith("npu-worker bench: terminated"), done.stderr
    assert "Task was destroyed" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not list(wavs.iterdir())  # the run's own folder removed, as a run that ends removes it
    report = json.loads(prefix.with_suffix(".json").read_text())
    assert report["interrupted"].startswith("Terminated while loading http at 20/s"), report["interrupted"]
