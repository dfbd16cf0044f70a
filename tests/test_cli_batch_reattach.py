"""`npu-worker batch` against a real worker that is killed (-9) or stopped (SIGTERM) mid-batch and started
again on its port: the client re-attaches, and says so. It printed nothing meanwhile (its progress froze
for the whole re-attach), and the words of the worker's `ShuttingDown` line were never shown."""

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


@pytest.mark.parametrize(
    ("stop", "said"),
    [
        (signal.SIGTERM, (": the stream failed: ShuttingDown: the worker is shutting down; job ",)),
        # a killed worker's socket is closed by the kernel: as the client reads it, an end or a break
        (signal.SIGKILL, (": the stream ended before its done event;", ": the connection broke (")),
    ],
    ids=["sigterm", "kill-9"],
)
def test_batch_says_when_its_stream_is_lost_and_when_it_is_re_attached(
    tmp_path: Path, stop: signal.Signals, said: tuple[str, ...]
) -> None:
    state = tmp_path / "state"
    worker = start_worker_process(state, 0, delay=0.05, grace=1.0, output_root=tmp_path)
    workers = [worker]
    lecture = tmp_path / "lecture.json"
    texts = ["하나.", *("가" * 60 for _ in range(4))]  # the first ends at once; the rest run on
    lecture.write_text(json.dumps({"sections": [{"idx": i, "text": text} for i, text in enumerate(texts)]}))
    command = [sys.executable, "-m", "npu_worker.cli_client", "batch", str(lecture)]
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
        while not (line := client.stderr.readline()).startswith("s00 ok"):
            assert line, f"the client ended before its first section: {lines}"
            lines.append(line)
        worker.send_signal(stop)
        worker.wait(timeout=seconds(30))
        # What the client says while no worker answers is read as it comes (it must not wait for the end).
        lost = threading.Event()

        def read() -> None:
            for line in client.stderr:  # type: ignore[union-attr]
                lines.append(line)
                if line.startswith("stream lost"):
                    lost.set()

        reader = threading.Thread(target=read)
        reader.start()
        assert lost.wait(seconds(20)), f"no line said the stream was lost: {lines}"
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
    lost_lines = [line for line in lines if line.startswith("stream lost after event ")]
    assert len(lost_lines) == 1 and any(words in lost_lines[0] for words in said), lines
    assert "; re-attaching to job " in lost_lines[0], lines
    back = [i for i, line in enumerate(lines) if line.startswith("re-attached to job ")]
    assert len(back) == 1 and lines.index(lost_lines[0]) < back[0], lines
    assert any(line.startswith("s04 ok") for line in lines[back[0] :]), lines
