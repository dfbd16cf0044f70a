"""A worker whose log a test reads keeps answering after logging more than a pipe holds: the tests read
a piped log only at exit, and a worker that filled the pipe (64 KiB) first blocked on its next line."""

from __future__ import annotations

import http.client

import pytest

from tests.timing import seconds
from tests.worker_process import start_worker_process

pytestmark = pytest.mark.allow_blocking
PIPE_BYTES = 64 * 1024


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
