"""`timeout N npu-worker batch …`: coreutils `timeout` sends its SIGTERM to the client and again to its
process group. The second copy killed the client while it cancelled its job (the handler was gone), so
the job ran on, unseen: `timeout 1.5 npu-worker batch` against a slow worker printed nothing in 2 runs of
6 and left one job running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.timing import seconds
from tests.worker_process import start_worker_process

pytestmark = pytest.mark.allow_blocking
ROOT = Path(__file__).resolve().parents[1]


def status_of(base: str, job_id: str) -> str:
    with urllib.request.urlopen(f"{base}/jobs/{job_id}/status", timeout=seconds(10)) as response:
        return json.loads(response.read())["status"]


def test_sigterm_sent_twice_as_timeout_sends_it_still_cancels_the_job(tmp_path: Path) -> None:
    worker = start_worker_process(tmp_path / "state", 0, delay=0.05, output_root=tmp_path)
    base = f"http://127.0.0.1:{worker.port}"
    lecture = tmp_path / "lecture.json"
    texts = ["하나.", "가" * 100, "가" * 100]  # the first ends at once; the second runs while it is stopped
    lecture.write_text(json.dumps({"sections": [{"idx": i, "text": text} for i, text in enumerate(texts)]}))
    command = [sys.executable, "-m", "npu_worker.cli_client", "batch", str(lecture)]
    command += ["--out-dir", str(tmp_path / "out"), "--base", base]
    client = subprocess.Popen(
        command, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True
    )
    try:
        assert client.stderr is not None
        while not (line := client.stderr.readline()).startswith("s00 ok"):
            assert line, "the client ended before its first section"
        worker.send_signal(signal.SIGSTOP)  # its DELETE waits for an answer while the second copy comes
        client.send_signal(signal.SIGTERM)
        time.sleep(0.2)  # two deliveries (one still pending when the next comes would be one signal)
        client.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        worker.send_signal(signal.SIGCONT)
        _, err = client.communicate(timeout=seconds(20))
        assert client.returncode == 143, (client.returncode, err)  # was -15: killed by the second copy
        assert "npu-worker batch: terminated; job " in err and " cancelled, " in err, err
        job_id = err.split("terminated; job ", 1)[1].split()[0]
        deadline = time.monotonic() + seconds(10)
        while (status := status_of(base, job_id)) != "cancelled" and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        worker.send_signal(signal.SIGCONT)
        client.kill()
        worker.kill()
        worker.wait()
    assert status == "cancelled" and not (tmp_path / "out" / "s02.wav").exists()
