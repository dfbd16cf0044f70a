"""A job id in the path that no job can have (job ids are 16 hex digits): one holding a byte that is not
UTF-8, which aiohttp's pure-Python parser lets through, was a 500 (the 404's words, quoting it, could not
be encoded; aiohttp's text/plain answer and a traceback in the log), and a control such as U+009B (a
terminal's CSI), sent percent-encoded, was quoted raw in the 404's words. Both are the 404, escaped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.raw_http import exchange, raw_exchange, refusal_of
from tests.timing import seconds
from tests.worker_process import start_worker_process

ROUTES = (
    b"GET /jobs/{}/result",
    b"GET /jobs/{}/events",
    b"DELETE /jobs/{}",
    b"GET /jobs/{}/sections/0/audio",
)


def _request(route: bytes, job_id: bytes) -> bytes:
    return route.replace(b"{}", job_id) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


async def test_a_control_in_a_job_id_is_escaped_in_its_404(served):
    listener = await served()
    for route in ROUTES:
        answer = await raw_exchange(listener.port, _request(route, b"a%c2%9bb%1b"), seconds(5))
        assert refusal_of(answer) == (404, "JobNotFound", "no job a\\x9bb\\x1b"), answer


@pytest.mark.allow_blocking
def test_with_the_pure_python_parser_a_job_id_that_is_not_utf_8_is_a_404(tmp_path: Path):
    env = {**os.environ, "AIOHTTP_NO_EXTENSIONS": "1"}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = start_worker_process(tmp_path / "state", 0, 0.0, env=env, stderr=out)
    answers = []
    try:
        for route in ROUTES:
            answers.append(exchange(process.port, _request(route, b"\xff\xc2\x9bx"), seconds(10)))
    finally:
        process.terminate()
        process.wait(timeout=seconds(10))
    for answer in answers:
        assert refusal_of(answer) == (404, "JobNotFound", "no job \\xff\\x9bx"), answer
    assert "Traceback" not in log.read_text("utf-8", "replace")
