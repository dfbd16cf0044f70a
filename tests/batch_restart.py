"""Runs `npu-worker batch` (a real client process) against a real worker that is stopped mid-batch and
started again on its port, so that each re-attach test asserts only on what the client printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.timing import seconds
from tests.worker_process import start_worker_process

ROOT = Path(__file__).resolve().parents[1]


def batch_through_a_restart(
    tmp_path: Path, options: list[str], started: str, stop: signal.Signals, lost: str, lost_within: float
) -> tuple[int, list[str]]:
    """Start the batch, wait for the line that starts with `started`, send `stop` to the worker, wait up to
    `lost_within` s for a line that starts with `lost`, start the worker again: the exit status and every
    line the client wrote to stderr."""
    state = tmp_path / "state"
    worker = start_worker_process(state, 0, delay=0.05, grace=1.0, output_root=tmp_path)
    workers = [worker]
    lecture = tmp_path / "lecture.json"
    texts = ["하나.", *("가" * 60 for _ in range(4))]  # the first ends at once; the rest run on
    lecture.write_text(json.dumps({"sections": [{"idx": i, "text": text} for i, text in enumerate(texts)]}))
    command = [sys.executable, "-m", "npu_worker.cli_client", "batch", str(lecture), *options]
    command += ["--out-dir", str(tmp_path / "out"), "--base", f"http://127.0.0.1:{worker.port}"]
    client = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
    )
    lines: list[str] = []
    reader: threading.Thread | None = None
    try:
        assert client.stderr is not None
        while not (line := client.stderr.readline()).startswith(started):
            assert line, f"the client ended before its first section: {lines}"
            lines.append(line)
        worker.send_signal(stop)
        worker.wait(timeout=seconds(30))
        # What the client says while no worker answers is read as it comes (it must not wait for the end).
        lost_seen = threading.Event()

        def read() -> None:
            for line in client.stderr:  # type: ignore[union-attr]
                lines.append(line)
                if line.startswith(lost):
                    lost_seen.set()

        reader = threading.Thread(target=read)
        reader.start()
        assert lost_seen.wait(seconds(lost_within)), f"no line said the {lost.split()[0]} was lost: {lines}"
        workers.append(start_worker_process(state, worker.port, delay=0.0, output_root=tmp_path))
        client.wait(timeout=seconds(60))
        reader.join(seconds(10))
    finally:
        if client.poll() is None:
            client.kill()
        client.wait(timeout=seconds(10))
        if reader is not None:  # (it ends at the pipe's end, which came with the client's)
            reader.join(seconds(10))
        for pipe in (client.stdout, client.stderr):  # (left open: "unclosed file" in a later test)
            if pipe is not None:
                pipe.close()
        for process in workers:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=seconds(10))
    return client.returncode, lines
