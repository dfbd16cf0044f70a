"""A worker whose log a test reads keeps answering after logging more than a pipe holds (the tests read
a piped log only at exit, and a worker that filled the pipe (64 KiB) first blocked on its next line);
the port a worker chose for `--port 0`, as the tools and benchmarks find it."""

from __future__ import annotations

import http.client
import importlib.util
import json
import logging
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType

import pytest

from tests.log_drain import LoggedProcess, echoed
from tests.serve_process import ServeProcess
from tests.timing import seconds
from tests.worker_process import start_worker_process

pytestmark = pytest.mark.allow_blocking
PIPE_BYTES = 64 * 1024
REPO = Path(__file__).resolve().parents[1]


def test_a_worker_that_logs_more_than_a_pipe_holds_still_answers_and_its_log_is_whole(tmp_path):
    process = start_worker_process(tmp_path / "state", 0, delay=0.0, logged=True)
    path = "/health?" + "q" * 3000  # each access-log line says the path (its first 500 or so bytes)
    requests = 8 * PIPE_BYTES // 500
    connection = http.client.HTTPConnection("127.0.0.1", process.port, timeout=seconds(10))
    try:
        for _ in range(requests):
            connection.request("GET", path)
            with connection.getresponse() as answer:
                assert answer.status == 200 and answer.read()
        connection.close()
        log = process.terminate_and_log(seconds(30))
    finally:
        process.kill()
    assert process.returncode == 0, log[-2000:]
    assert log.count('"GET /health?') == requests and len(log) > 4 * PIPE_BYTES


def test_a_worker_on_port_0_is_found_by_its_log_and_by_proc(tmp_path):
    """The tools (ServeProcess) and benchmarks (common.listening_port) gave the worker a port picked free
    and closed first, which another process could take meanwhile (and then answer in its place)."""
    common = import_benchmarks_common()
    process = ServeProcess(["--state-dir", str(tmp_path / "state")], echo_from="ERROR")
    try:
        assert common.listening_port(process) == process.port
        try:  # the worker's own answer: 200, or 503 while its engine loads
            with urllib.request.urlopen(f"{process.base}/health", timeout=seconds(10)) as answer:
                health = json.loads(answer.read())
        except urllib.error.HTTPError as loading:
            health = json.loads(loading.read())
        assert "loaded" in health, health
    finally:
        process.kill()
        process.log_at_exit(seconds(30))


def test_a_tools_echo_shows_the_lines_at_its_level_and_their_tracebacks(capsys):
    lines = [
        "2026-12-06 06:00:00,001 INFO aiohttp.access: 127.0.0.1 GET /health\n",
        "2026-12-06 06:00:00,002 ERROR npu_worker.app: failed\n",
        "Traceback (most recent call last):\n",
        "ValueError: x\n",
        "2026-12-06 06:00:00,003 WARNING npu_worker.server: slow\n",
        "  a line that goes with the warning\n",
    ]
    echoing = False
    for line in lines:
        echoing = echoed(line, logging.ERROR, echoing)
    assert capsys.readouterr().err == "".join(lines[1:4])


def import_benchmarks_common() -> ModuleType:
    """benchmarks/common.py, as the scripts import it (their folder first on sys.path)."""
    spec = importlib.util.spec_from_file_location("common", REPO / "benchmarks" / "common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_killed_logged_process_is_reaped_and_its_log_pipe_closed():
    """A process killed and never waited for stayed a zombie, its Popen warning 'still running', and each
    log pipe stayed open until a later test's GC warned 'unclosed file': both landed in other tests."""
    process = LoggedProcess(
        [sys.executable, "-c", "import sys, time; print('up', file=sys.stderr, flush=True); time.sleep(60)"]
    )
    process.log_until("up", seconds(30))
    process.kill()
    assert process.returncode == -signal.SIGKILL  # reaped by kill itself: no zombie left
    process.log_at_exit(seconds(30))  # (the reader has read the pipe to its end)
    assert process.stderr is not None and process.stderr.closed
