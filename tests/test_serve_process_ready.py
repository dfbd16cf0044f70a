"""`ServeProcess.wait_ready`, what the tests of a real `serve` wait for before they send work: the
slow reader's test waited for "engine ready", then for "jobs kept", and neither line says both halves
of ready: on an empty state dir "jobs kept" comes first, while the engine may still load, and a synth
sent then is answered `Loading` (CI, 2026-12-07). Here the engine's load is held (a sovits upstream
that says it is loading) until the kept jobs are read, so the gap is there on every run."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess
from tests.sovits_standin import SovitsStandIn
from tests.timing import seconds

pytestmark = pytest.mark.allow_blocking
REPO = Path(__file__).resolve().parents[1]


def synth(base: str, text: str, output: Path) -> int:
    body = json.dumps({"text": text, "output_path": str(output)}).encode()
    request = urllib.request.Request(f"{base}/synth", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=seconds(30)) as answer:
        return answer.status


def test_wait_ready_waits_for_the_engine_after_the_kept_jobs_are_read(tmp_path):
    loading = {"status": "ok", "loaded": False}  # sovits_worker's own load: the worker waits for it
    with SovitsStandIn(health=loading) as upstream:
        args = ["--backend", "sovits", "--sovits-base", upstream.base, "--state-dir", str(tmp_path / "state")]
        process = ServeProcess(
            [*args, "--output-roots", str(tmp_path)], {**os.environ, "PYTHONPATH": str(REPO)}
        )
        try:
            process.log_until("jobs kept", seconds(30))  # the kept jobs are read; the engine still waits
            with pytest.raises(AssertionError, match=r"not ready \(503 the engine is still loading\)"):
                process.wait_ready(seconds(1))
            upstream.health = {"status": "ok", "loaded": True, "device": "cuda"}
            base = process.wait_ready()
            assert synth(base, "하나.", tmp_path / "a.wav") == 200  # served at once, not `Loading`
        finally:
            process.terminate_and_log(seconds(30))


def test_wait_ready_ends_at_once_for_a_worker_whose_engine_failed_to_load(tmp_path):
    """`/ready`'s 503 without `Retry-After` (a failed load: waiting does not help) ends the wait with
    the reason, not after the whole deadline."""
    with SovitsStandIn(prefix="/elsewhere") as upstream:  # its /health a 404: a load that can never work
        args = ["--backend", "sovits", "--sovits-base", upstream.base, "--state-dir", str(tmp_path / "state")]
        process = ServeProcess(args, {**os.environ, "PYTHONPATH": str(REPO)})
        try:
            with pytest.raises(AssertionError, match=r"cannot serve \(503 the engine failed to load: "):
                process.wait_ready(seconds(60))
        finally:
            process.terminate_and_log(seconds(30))
