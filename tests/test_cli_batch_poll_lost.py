"""`npu-worker batch --poll` against a real worker killed (-9) mid-batch and started again on its port:
the client says the worker is lost while it retries its polls, then that it was answered again. It
printed nothing for the whole retry, until it gave up, where streaming said "stream lost"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.timing import seconds
from tests.worker_process import start_worker_process

pytestmark = pytest.mark.allow_blocking
ROOT = Path(__file__).resolve().parents[1]


def test_batch_poll_says_when_the_worker_is_lost_and_when_it_answers_again(tmp_path: Path) -> None:
    state = tmp_path / "state"
    worker = start_worker_process(state, 0, delay=0.05, grace=1.0, output_root=tmp_path)
    workers = [worker]
    lecture = tmp_path / "lecture.json"
    texts = ["하나.", *("가" * 60 for _ in range(4))]  # the first ends at once; the rest run on
    lecture.write_text(json.dumps({"sections": [{"idx": i, "text": text} for i, text in enumerate(texts)]}))
    command = [sys.executable, "-m", "npu_worker.cli_client", "batch", str(lecture), "--poll"]
    command += ["--out-dir", str(tmp_path / "out"), "--base", f"http://127.0.0.1:{worker.port}"]
    client = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
    )
    lines: list[str] = []
    try:
        assert client.stderr is not None
        while not (line := client.stderr.readline()).startswith("1 done"):
            assert line, f"the client ended before its first section: {lines}"
            lines.append(line)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=seconds(30))
        lost = threading.Event()

        def read() -> None:
            for line in client.stderr:  # type: ignore[union-attr]
                lines.append(line)
                if line.startswith("worker lost: "):
                    lost.set()

        reader = threading.Thread(target=read)
        reader.start()
        assert lost.wait(seconds(10)), f"no line said the worker was lost: {lines}"
        workers.append(start_worker_process(state, worker.port, delay=0.0, output_root=tmp_path))
        client.wait(timeout=seconds(60))
        reader.join(seconds(10))
    finally:
        if client.poll() is None:
            client.kill()
        for process in workers:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=seconds(10))
    assert client.returncode == 0, lines
    lost_lines = [line for line in lines if line.startswith("worker lost: ")]
    assert len(lost_lines) == 1 and "cannot reach the worker: Connection refused" in lost_lines[0], lines
    assert "; polling job " in lost_lines[0] and lost_lines[0].endswith(" again\n"), lines
    back = [i for i, line in enumerate(lines) if line.startswith("answered about job ")]
    assert len(back) == 1 and lines.index(lost_lines[0]) < back[0], lines
