"""`npu-worker bench` against a real worker that dies under the load, after some requests succeeded: the
run exited 0, as a clean benchmark does, with nothing on stderr saying the worker had gone (a CI job that
publishes the figures when the command succeeds published a crashed worker's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.serve_process import ServeProcess
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]


def test_a_worker_killed_between_two_rates_ends_the_bench_with_exit_1_and_a_line_saying_so(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    worker = ServeProcess(["--state-dir", str(tmp_path / "state"), "--cache-max-bytes", "0"], env)
    try:
        # ready first: a bench sent to a loading worker has its first rate's requests answered `Loading`
        argv = [sys.executable, "-m", "npu_worker.bench.cli", "bench", "--base", worker.wait_ready()]
        # --seed 1's arrivals at 5/s go on until 2.98 s: the worker is killed while they are sent
        argv += ["--rps", "4,5", "--duration", "3", "--requests", "20", "--transports", "ws", "--seed", "1"]
        argv += ["--timeout", str(seconds(30)), "--out", str(tmp_path / "run")]
        bench = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert bench.stderr is not None
        lines = []
        for line in bench.stderr:  # the first rate's line: its requests measured, the second not yet sent
            lines.append(line)
            if line.startswith("ws at 4/s: "):
                break
        worker.kill()
        worker.wait(seconds(30))
        rest = bench.stderr.read()
        code = bench.wait(seconds(60))
    finally:
        worker.kill()
        worker.wait(seconds(30))
    said = "".join(lines) + rest
    assert lines[-1].startswith("ws at 4/s: 8 requests, 0 failed"), said
    assert code == 1, said
    report = json.loads((tmp_path / "run.json").read_text())  # written all the same, the figures kept
    failed = sum(r["error"] is not None for r in report["records"])
    assert len(report["records"]) == 28 and failed >= 1, report["records"]
    assert "npu-worker bench: the worker could not be reached after the run (" in rest, said
    assert f"it may have died under the load; {failed} of 28 requests failed" in rest, said
    assert "unreachable" in report["health_after"], report["health_after"]
